# golden: --unsafe-fixes --all-paths
import torch


def gate(x: torch.Tensor, y: torch.Tensor):
    x = torch.where((x.sum() > 0) & (~y.any()), x * 2, x)
    y = torch.where(torch.isnan(x).any() | torch.isinf(y).any(), y * 0, y)
    return x, y
