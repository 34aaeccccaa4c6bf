# golden: --unsafe-fixes --all-paths
import torch


@torch.compile
def swap_larger(a: torch.Tensor, b: torch.Tensor):
    def _then(a, b):
        a, b = b, a
        return a.clone(), b.clone()
    def _else(a, b):
        return a.clone(), b.clone()
    a, b = torch.cond(a.sum() > b.sum(), _then, _else, (a, b))
    return a, b


def twice(x: torch.Tensor, y: torch.Tensor):
    def _then(x, y):
        x = x * 2
        x = x + y
        return x
    def _else(x, y):
        return x.clone()
    x = torch.cond(x.mean() > 0, _then, _else, (x, y))
    return x


twice_compiled = torch.compile(twice, dynamic=False)
