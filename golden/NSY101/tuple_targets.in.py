# golden: --unsafe-fixes --all-paths
import torch


def scale_both(x: torch.Tensor, y: torch.Tensor):
    if x.norm() > y.norm():
        x, y = x * 0.5, y * 2
    return x, y
