# golden: --unsafe-fixes --all-paths
import torch


def clamp_step(x: torch.Tensor):
    y = x.sum()

    # Halve large steps.
    # rare
    # keep the sign
    # halve
    x = torch.where(x.abs().max() > 4, x * 0.5, x)

    return x + y
