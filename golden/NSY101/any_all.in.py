# golden: --unsafe-fixes --all-paths
import torch


def guard(h: torch.Tensor, g: torch.Tensor):
    if torch.isnan(h).any():
        h = torch.zeros_like(h)
    if not torch.isfinite(g).all():
        g = torch.zeros_like(g)
    return h, g
