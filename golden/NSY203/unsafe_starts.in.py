# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


def train(model, loader, criterion):
    best = 1e9
    top = 0.0
    low = 0.0
    for x, y in loader:
        mse = F.mse_loss(model(x), y)
        best = min(best, mse.item())
        loss = criterion(model(x), y)
        top = max(top, loss.item())
        count = (torch.argmax(model(x), 1) == y).sum()
        low = min(low, count.item())
    return best, top, low
