# golden: --unsafe-fixes --all-paths
import torch


def one_line(x: torch.Tensor):
    x = torch.where(x.sum() > 0, x * 2, x)
    return x
