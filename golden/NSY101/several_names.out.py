# golden: --unsafe-fixes --all-paths
import torch


def update(x: torch.Tensor, y: torch.Tensor):
    cond = x.mean() > 0
    cond_2 = x.mean() < -1
    x = torch.where(cond, x * 2, torch.where(cond_2, -x, x))
    y = torch.where(cond, y + 1, torch.where(cond_2, y, y - 1))
    return x, y
