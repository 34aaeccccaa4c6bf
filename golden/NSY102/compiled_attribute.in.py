# golden: --unsafe-fixes
# The loss is compiled where the recipe sets it up (`self.loss_fn = torch.compile(...)`):
# its forward runs compiled, and the branch becomes torch.cond.
import torch
import torch.nn as nn


class MaskedMean(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor):
        total = mask.sum()
        if total == 0:
            return torch.zeros((), dtype=x.dtype)
        return (x * mask).sum() / total


class Recipe:
    def __init__(self):
        self.loss_fn = MaskedMean()
        self.loss_fn = torch.compile(self.loss_fn)
