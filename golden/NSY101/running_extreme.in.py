# golden: --unsafe-fixes --all-paths
import torch


def validate(model, loader):
    best = float("inf")
    best_t = torch.full((), float("inf"))
    for x, y in loader:
        val = torch.nn.functional.mse_loss(model(x), y)
        if val.item() < best:
            best = val.item()
        if val < best_t:
            best_t = val
        best_t = val if val < best_t else best_t
        if val.item() < best:
            best = val.item()
            torch.save(model.state_dict(), "best.pt")
    return best, best_t
