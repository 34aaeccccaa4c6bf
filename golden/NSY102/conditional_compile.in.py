# golden: --unsafe-fixes
# The loss is compiled only when a flag says so (`if compile_loss:`): with the flag off its
# forward runs eagerly, where torch.cond traces its branches on every call. No fix.
import torch
import torch.nn as nn


class MaskedMean(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor):
        total = mask.sum()
        if total == 0:
            return torch.zeros((), dtype=x.dtype)
        return (x * mask).sum() / total


class Recipe:
    def __init__(self, compile_loss: bool):
        self.loss_fn = MaskedMean()
        if compile_loss:
            self.loss_fn = torch.compile(self.loss_fn)
