# golden: --unsafe-fixes --all-paths
import torch


def pick(a: torch.Tensor, b: torch.Tensor):
    for _ in range(3):
        out = torch.where(a.sum() > b.sum(), a - b, b - a)
        a = out
    return a
