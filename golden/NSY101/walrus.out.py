# golden: --unsafe-fixes --all-paths
import torch


def normalize(x: torch.Tensor):
    x = torch.where((n := x.norm()) > 1, x * 0.5, x)
    return x, n
