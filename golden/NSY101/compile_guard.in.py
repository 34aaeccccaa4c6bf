# golden: --unsafe-fixes --all-paths
import torch


def guarded(x: torch.Tensor):
    if not torch.compiler.is_compiling():
        if x.sum() > 0:
            x = x * 2
    if torch.compiler.is_compiling() or x.sum() > 0:
        x = x + 1
    return x


def already_cond(x: torch.Tensor):
    def _double(x):
        return x * 2

    def _keep(x):
        return x.clone()

    return torch.cond(x.sum() > 0, _double, _keep, (x,))


def already_where(x: torch.Tensor):
    return torch.where(x.sum() > 0, x * 2, x)
