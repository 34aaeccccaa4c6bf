# golden: --unsafe-fixes --all-paths
import torch


def pick(a: torch.Tensor, b: torch.Tensor):
    for _ in range(3):
        if a.sum() > b.sum():
            out = a - b
        else:
            out = b - a
        a = out
    return a
