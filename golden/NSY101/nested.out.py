# golden: --unsafe-fixes --all-paths
import torch


def nested(x: torch.Tensor, y: torch.Tensor):
    cond = x.sum() > 0
    x = torch.where(cond, torch.where(y.sum() > 0, x * 2, x), x)
    y = torch.where(cond, y + 1, y)
    return x, y
