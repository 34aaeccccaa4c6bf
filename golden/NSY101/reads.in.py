# golden: --unsafe-fixes --all-paths
import torch


def reads(t: torch.Tensor, x: torch.Tensor, flag: torch.Tensor):
    if float(t.sum()) > 0.5:
        x = x + 1
    if int(t.sum()) > 3:
        x = x - 1
    if flag.item():
        x = x * 2
    return x
