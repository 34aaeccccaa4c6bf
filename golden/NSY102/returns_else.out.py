# golden: --unsafe-fixes --all-paths
import torch


@torch.compile(fullgraph=True)
def split(x: torch.Tensor, y: torch.Tensor):
    def _then(x, y):
        d = x - y
        return d, y.clone()
    def _else(x, y):
        return x.clone(), y - x
    return torch.cond(x.sum() > y.sum(), _then, _else, (x, y))
