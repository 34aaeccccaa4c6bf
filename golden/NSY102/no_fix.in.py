# golden: --unsafe-fixes --all-paths
import torch


def temporary_not_bound(x: torch.Tensor):
    if x.sum() > 0:
        t = x * 2
        y = t + 1
    return y


def elif_chain(x: torch.Tensor):
    if x.sum() > 0:
        t = x * 2
        x = t + 1
    elif x.sum() < -1:
        x = -x
    return x


def returns_number(x: torch.Tensor):
    if x.sum() > 0:
        return x * 2
    return 0.0
