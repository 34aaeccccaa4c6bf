import torch


class AverageMeter:
    def __init__(self):
        self.sum = 0.0

    def update(self, val):
        self.sum += val


def train(model, loader, criterion):
    meter = AverageMeter()
    for x, y in loader:
        meter.update(criterion(model(x), y).item())
    return meter.sum
