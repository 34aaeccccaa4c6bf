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
        losses.append(F.mse_loss(out, y).detach())
        preds.append(torch.argmax(out, 1).detach())
    losses = [v.item() if isinstance(v, torch.Tensor) else v for v in losses]
    preds = [
        x for v in preds for x in (v.tolist() if isinstance(v, torch.Tensor) else [v])
    ]
    return losses, preds
