import torch
import torch.nn.functional as F


def train(model, loader, validate, path):
    best = float("inf")
    best_epoch = 0
    low = float("inf")
    high = 0.0
    for epoch, (x, y) in enumerate(loader):
        loss = F.mse_loss(model(x), y)
        val_loss = validate(model)
        best = min(best, val_loss)
        if loss.item() < low:
            low = loss.item()
            torch.save(model.state_dict(), path)
        if loss.item() > high:
            high = loss.item()
        else:
            best_epoch = epoch
        high = max(high, loss.item(), 1.0)
    return best, best_epoch, low, high


def outside_loop(a, b):
    best = 0.0
    best = max(best, a.item())
    return best
