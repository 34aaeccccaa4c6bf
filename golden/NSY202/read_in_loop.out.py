import numpy as np
import torch
import torch.nn.functional as F
from nosync_fix.runtime import to_host


def train(model, loader):
    losses = []
    for step, (x, y) in enumerate(loader):
        losses.append(F.mse_loss(model(x), y).item())
        if step % 100 == 0:
            print(np.mean(losses[-100:]))
    return losses


def early_stop(model, loader):
    losses = []
    for x, y in loader:
        losses.append(F.mse_loss(model(x), y).item())
        if losses[-1] < 0.01:
            break
    return losses


def only_len(model, loader, log):
    losses = []
    for x, y in loader:
        losses.append(F.mse_loss(model(x), y).detach())
        if len(losses) % 10 == 0:
            log(len(losses))
    losses = to_host(losses, "item")
    return losses
