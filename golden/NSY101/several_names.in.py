# golden: --unsafe-fixes --all-paths
import torch


def update(x: torch.Tensor, y: torch.Tensor):
    if x.mean() > 0:
        x = x * 2
        y = y + 1
    elif x.mean() < -1:
        x = -x
    else:
        y = y - 1
    return x, y
