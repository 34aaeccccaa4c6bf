# golden: --all-paths
import torch


def shrink(steps: int):
    x = torch.randn(8)
    for _ in range(steps):
        x = torch.where(x.abs().max() > 1.0, x * 0.5, x)
    return x
