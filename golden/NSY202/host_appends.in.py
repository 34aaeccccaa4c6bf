import torch
import torch.nn.functional as F


def train(model, loader):
    losses = []
    preds = []
    for x, y in loader:
        if x.shape[0] == 0:
            losses.append(0.0)
            preds.extend([-1, -1])
            continue
        out = model(x)
        losses.append(F.mse_loss(out, y).item())
        preds.extend(torch.argmax(out, 1).tolist())
    return losses, preds
