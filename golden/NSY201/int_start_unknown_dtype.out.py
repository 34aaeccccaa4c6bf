# golden: --unsafe-fixes
import torch
from nosync_fix.runtime import python_precision


def train(model, loader, criterion):
    total = 0
    for x, y in loader:
        total += python_precision(criterion(model(x), y).detach())
    total = total.item() if isinstance(total, torch.Tensor) else total
    return total
