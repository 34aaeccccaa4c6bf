# golden: --unsafe-fixes
# Issue 18, forms c', f and f': a test on a parameter of forward (or of a compiled function)
# that the code reduces with tensor methods reads the device if the parameter is a tensor,
# as what models are called with is. Not known: reported without a fix, whether or not the
# file compiles the module. Bare parameters (`if flag:`, `if score > 0:`) stay quiet: they
# are as often flags and numbers.
import torch
import torch.nn as nn


class Clamp(nn.Module):
    def forward(self, h, x, flag=False, score=0.0):
        if h.abs().max() > 1e3:
            h = h.clamp(-1e3, 1e3)
        total = x.sum()  # a name bound once to a reduction of a parameter
        if total > 0:
            h = h * 2
        if flag:
            h = h + 1
        if score > 0:
            h = h - 1
        if h is None:
            return None
        return h


class Annotated(nn.Module):
    def forward(self, h: torch.Tensor):
        h = torch.where(h.abs().max() > 1e3, h.clamp(-1e3, 1e3), h)
        return h


@torch.compile
def gate(y, mask):
    if mask.any():
        return y * 2
    return y - 1


def helper(h):
    # not model code: its parameters are not presumed tensors
    if h.abs().max() > 1e3:
        h = h.clamp(-1e3, 1e3)
    return h


model = torch.compile(Clamp())
