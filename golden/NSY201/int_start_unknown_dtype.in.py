# golden: --unsafe-fixes
import torch


def train(model, loader, criterion):
    total = 0
    for x, y in loader:
        total += criterion(model(x), y).item()
    return total
