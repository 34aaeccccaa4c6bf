import torch


def train(model, batches, criterion, max_steps):
    step = 0
    total = 0.0
    while step < max_steps:
        x, y = next(batches)
        loss = criterion(model(x), y)
        loss.backward()
        total += loss.detach().double()
        step += 1
    total = float(total)
    print(f"mean loss {total / max(step, 1):.4f}")
