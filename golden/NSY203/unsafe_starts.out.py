# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


def train(model, loader, criterion):
    best = 1e9
    top = 0.0
    low = 0.0
    for x, y in loader:
        mse = F.mse_loss(model(x), y)
        best = torch.where(mse < best, mse.detach(), best)
        loss = criterion(model(x), y)
        top = torch.where(loss > top, loss.detach(), top)
        count = (torch.argmax(model(x), 1) == y).sum()
        low = torch.where(count < low, count.detach(), low)
    best = float(best)
    top = float(top)
    low = low.item() if isinstance(low, torch.Tensor) else low
    return best, top, low
