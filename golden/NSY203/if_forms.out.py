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
        best = torch.where(val < best, val.detach(), best)
        best_acc = torch.where(best_acc <= acc, acc.detach(), best_acc)
        worst = torch.where(worst < val, val.detach(), worst)
    best = float(best)
    best_acc = float(best_acc)
    worst = float(worst)
    return best, best_acc, worst
