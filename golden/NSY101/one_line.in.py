# golden: --unsafe-fixes --all-paths
import torch


def one_line(x: torch.Tensor):
    if x.sum() > 0: x = x * 2
    return x
