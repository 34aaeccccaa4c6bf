# golden: --unsafe-fixes --all-paths
import torch


def gate(x: torch.Tensor, y: torch.Tensor):
    if x.sum() > 0 and not y.any():
        x = x * 2
    if torch.isnan(x).any() or torch.isinf(y).any():
        y = y * 0
    return x, y
