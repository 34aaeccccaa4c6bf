import torch
import torch.nn.functional as F


def train(model, loader, warmup_losses):
    history = [0.0]
    history.append(1.0)
    for x, y in loader:
        history.append(F.mse_loss(model(x), y).item())
    return history


def resumed(model, loader, previous):
    losses = [previous]
    for x, y in loader:
        losses.append(F.mse_loss(model(x), y).item())
    return losses
