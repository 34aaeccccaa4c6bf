# golden: --unsafe-fixes --all-paths
import torch


def simple(x: torch.Tensor):
    if x.sum() > 0:
        x = x * 2
    return x


def host(x: torch.Tensor, step: int):
    if step > 0:
        t = x * 2
        x = t + 1
    return x
