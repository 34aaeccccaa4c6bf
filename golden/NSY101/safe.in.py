# golden: --all-paths
import torch


def shrink(steps: int):
    x = torch.randn(8)
    for _ in range(steps):
        if x.abs().max() > 1.0:
            x = x * 0.5
    return x
