import torch
import torch.nn.functional as F
from nosync_fix.runtime import to_host


def train(model, loader, warmup_losses):
    history = [0.0]
    history.append(1.0)
    history_start = len(history)
    for x, y in loader:
        history.append(F.mse_loss(model(x), y).detach())
    history[history_start:] = to_host(history[history_start:], "item")
    return history


def resumed(model, loader, previous):
    losses = [previous]
    losses_start = len(losses)
    for x, y in loader:
        losses.append(F.mse_loss(model(x), y).detach())
    losses[losses_start:] = to_host(losses[losses_start:], "item")
    return losses
