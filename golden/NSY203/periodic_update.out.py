# Messages fit the code (issue 20, item 4): a running extreme updated only on logging
# steps reads the device "whenever it runs (every N steps)", not "every step".
import torch
import torch.nn.functional as F


def train(model, loader, log_every):
    best = float("inf")
    lowest = float("inf")
    for step, (x, y) in enumerate(loader):
        loss = F.mse_loss(model(x), y)
        lowest = torch.where(loss < lowest, loss.detach(), lowest)
        if step % log_every == 0:
            best = torch.where(loss < best, loss.detach(), best)
    lowest = float(lowest)
    best = float(best)
    return best, lowest
