import torch
import torch.nn.functional as F


def validate(model, loader):
    best = float("inf")
    best_acc = 0.0
    worst = -float("inf")
    for x, y in loader:
        out = model(x)
        val = F.cross_entropy(out, y)
        acc = (torch.argmax(out, 1) == y).float().mean()
        # keep the lowest loss
        if val < best:
            best = val.item()
        if best_acc <= acc.item():
            best_acc = acc.item()
        if worst < float(val):
            worst = float(val)
    return best, best_acc, worst
