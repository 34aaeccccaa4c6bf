# golden: --unsafe-fixes --all-paths
import torch


@torch.compile(fullgraph=True)
def split(x: torch.Tensor, y: torch.Tensor):
    if x.sum() > y.sum():
        d = x - y
        return d, y
    else:
        return x, y - x
