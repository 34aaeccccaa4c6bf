import torch
import torch.nn.functional as F
from nosync_fix.runtime import to_host


def fit(model, loader, epochs):
    all_losses = []
    per_epoch = []
    for epoch in range(epochs):
        preds = []
        all_losses_start = len(all_losses)
        for x, y in loader:
            out = model(x)
            loss = F.cross_entropy(out, y)
            all_losses.append(loss.detach())
            preds.append(torch.argmax(out, 1).detach())
        all_losses[all_losses_start:] = to_host(all_losses[all_losses_start:], "item")
        preds = to_host(preds, "extend")
        per_epoch.append(preds)
        print(epoch, len(all_losses), sum(all_losses) / len(all_losses))
    return all_losses, per_epoch
