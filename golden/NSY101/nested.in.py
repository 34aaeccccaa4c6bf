# golden: --unsafe-fixes --all-paths
import torch


def nested(x: torch.Tensor, y: torch.Tensor):
    if x.sum() > 0:
        if y.sum() > 0:
            x = x * 2
        y = y + 1
    return x, y
