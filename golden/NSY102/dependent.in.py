# golden: --unsafe-fixes --all-paths
import torch


@torch.compile
def swap_larger(a: torch.Tensor, b: torch.Tensor):
    if a.sum() > b.sum():
        a, b = b, a
    return a, b


def twice(x: torch.Tensor, y: torch.Tensor):
    if x.mean() > 0:
        x = x * 2
        x = x + y
    return x


twice_compiled = torch.compile(twice, dynamic=False)
