# golden: --unsafe-fixes --all-paths
import torch


def warmup(x: torch.Tensor, step: int):
    if step == 0:
        x = x * 0
    else:
        x = torch.where(x.sum() > 0, x * 2, x)
    return x


def host_elif(x: torch.Tensor, step: int):
    x = torch.where(x.sum() > 0, x * 2, x * 3 if step > 3 else x)
    return x
