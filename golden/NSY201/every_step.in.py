import torch


def train(model, loader, optimizer):
    running = 0.0
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.l1_loss(model(x), y)
        loss.backward()
        optimizer.step()
        running += loss.item()
        print(f"step {step} running mean {running / (step + 1):.4f}")
