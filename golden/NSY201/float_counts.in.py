import torch


def accuracy(model, loader):
    correct = 0.0
    wrong = 0
    for x, y in loader:
        pred = torch.argmax(model(x), dim=1)
        correct += (pred == y).sum().item()
        wrong -= (pred != y).any().item()
    return correct, wrong
