# golden: --unsafe-fixes --all-paths
import torch


def python_number(x: torch.Tensor):
    s = 0.0
    if x.sum() > 0:
        s = x.sum()
    return s


def unbound(x: torch.Tensor):
    if x.sum() > 0:
        y = x * 2
    return y


def mixed(x: torch.Tensor, step: int):
    if x.sum() > 0 and step > 10:  # device first: `and` may skip the host part
        x = x * 2
    return x


def dtype_mismatch(x: torch.Tensor):
    m = x > 0
    if x.sum() > 0:
        m = x * 2.0
    return m


def assigns_number(x: torch.Tensor):
    lr = torch.ones(())
    if x.sum() > 0:
        lr = 0.1
    return lr


def counter(x: torch.Tensor):
    n = 0
    if x.sum() > 0:
        n += 1
    return n


def same_tensor_other_dtype(x: torch.Tensor, idx: torch.Tensor):
    y = idx.long()
    z = x.float()
    if x.sum() > 0:
        z = y
    return z
