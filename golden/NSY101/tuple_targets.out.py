# golden: --unsafe-fixes --all-paths
import torch


def scale_both(x: torch.Tensor, y: torch.Tensor):
    cond = x.norm() > y.norm()
    x = torch.where(cond, x * 0.5, x)
    y = torch.where(cond, y * 2, y)
    return x, y
