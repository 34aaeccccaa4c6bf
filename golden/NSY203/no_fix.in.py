import torch
import torch.nn.functional as F


def train(model, loader, criterion, log):
    best = None
    shown = float("inf")
    computed = float("inf")
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        if best is None:
            best = loss.item()
        best = min(best, loss.item())
        shown = min(shown, loss.item())
        log(f"best so far {shown:.3f}")
        computed = min(computed, F.mse_loss(model(x), y).item())
    return best, shown, computed
