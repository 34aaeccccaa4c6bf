# golden: --unsafe-fixes --all-paths
import torch


def normalize(x: torch.Tensor):
    if (n := x.norm()) > 1:
        x = x * 0.5
    return x, n
