# Issue 18 form b: an exponential moving average of a read is reported precisely; one of
# host values only, or outside a loop, is not.
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, b=0.98):
    ema = 0.0
    steps = 0.0
    for step, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        ema = b * ema + (1 - b) * loss.item()
        steps = b * steps + (1 - b) * step
    return ema, steps


def once(model, x, y, ema, b=0.9):
    loss = F.cross_entropy(model(x), y)
    ema = b * ema + (1 - b) * loss.item()
    return ema
