import torch


def setup(x: torch.Tensor):
    if x.sum() > 0:
        x = x * 2
    return x
