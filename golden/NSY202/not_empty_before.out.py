import torch
import torch.nn.functional as F


def train(model, loader, warmup_losses):
    history = [0.0]
    history.append(1.0)
    history_start = len(history)
    for x, y in loader:
        history.append(F.mse_loss(model(x), y).detach())
    if len({(v.dtype, v.device) for v in history[history_start:]}) == 1:
        history[history_start:] = torch.cat(
            [v.reshape(1) for v in history[history_start:]]
        ).tolist()
    else:
        history[history_start:] = [v.item() for v in history[history_start:]]
    return history


def resumed(model, loader, previous):
    losses = [previous]
    losses_start = len(losses)
    for x, y in loader:
        losses.append(F.mse_loss(model(x), y).detach())
    if len({(v.dtype, v.device) for v in losses[losses_start:]}) == 1:
        losses[losses_start:] = torch.cat(
            [v.reshape(1) for v in losses[losses_start:]]
        ).tolist()
    else:
        losses[losses_start:] = [v.item() for v in losses[losses_start:]]
    return losses
