# golden: --unsafe-fixes --all-paths
import torch


def warmup(x: torch.Tensor, step: int):
    if step == 0:
        x = x * 0
    elif x.sum() > 0:
        x = x * 2
    return x


def host_elif(x: torch.Tensor, step: int):
    if x.sum() > 0:
        x = x * 2
    elif step > 3:
        x = x * 3
    return x
