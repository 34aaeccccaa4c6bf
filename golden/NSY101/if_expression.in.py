# golden: --unsafe-fixes --all-paths
import torch


def choose(a: torch.Tensor, b: torch.Tensor):
    best = a if a.sum().item() > 0 else b
    return best
