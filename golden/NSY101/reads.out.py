# golden: --unsafe-fixes --all-paths
import torch


def reads(t: torch.Tensor, x: torch.Tensor, flag: torch.Tensor):
    x = torch.where(t.sum() > 0.5, x + 1, x)
    x = torch.where(t.sum().long() > 3, x - 1, x)
    x = torch.where(flag.bool(), x * 2, x)
    return x
