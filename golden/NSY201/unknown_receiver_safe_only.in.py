import torch


def train(model, loader, optimizer):
    total = 0.0
    for batch in loader:
        out = model(**batch)
        total += out.loss.item()
    return total
