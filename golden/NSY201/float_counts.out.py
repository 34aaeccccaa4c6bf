import torch


def accuracy(model, loader):
    correct = 0.0
    wrong = 0
    for x, y in loader:
        pred = torch.argmax(model(x), dim=1)
        correct += (pred == y).sum().detach().double()
        wrong -= (pred != y).any().detach().long()
    correct = float(correct)
    wrong = int(wrong)
    return correct, wrong
