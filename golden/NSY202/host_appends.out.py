import torch
import torch.nn.functional as F
from nosync_fix.runtime import to_host


def train(model, loader):
    losses = []
    preds = []
    for x, y in loader:
        if x.shape[0] == 0:
            losses.append(0.0)
            preds.extend([-1, -1])
            continue
        out = model(x)
        losses.append(F.mse_loss(out, y).detach())
        preds.append(torch.argmax(out, 1).detach())
    losses = to_host(losses, "item")
    preds = to_host(preds, "extend")
    return losses, preds
