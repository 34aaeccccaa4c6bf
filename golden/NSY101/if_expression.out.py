# golden: --unsafe-fixes --all-paths
import torch


def choose(a: torch.Tensor, b: torch.Tensor):
    best = torch.where(a.sum() > 0, a, b)
    return best
