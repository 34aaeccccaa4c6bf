# golden: --unsafe-fixes --all-paths
import torch


def clamp_step(x: torch.Tensor):
    y = x.sum()

    # Halve large steps.
    if x.abs().max() > 4:  # rare
        # keep the sign
        x = x * 0.5  # halve

    return x + y
