import torch


def train(model, data):
    for item in data:
        loss = model(item).sum()
        loss.backward()
        print(f"loss {loss.item():.3f}")
