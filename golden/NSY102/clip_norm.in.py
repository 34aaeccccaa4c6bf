# golden: --unsafe-fixes
import torch
import torch.nn as nn


class Clip(nn.Module):
    def __init__(self, max_norm: float):
        super().__init__()
        self.max_norm = max_norm

    def forward(self, x: torch.Tensor):
        norm = x.norm()
        if norm > self.max_norm:
            # rescale to the limit
            scale = self.max_norm / norm
            x = x * scale
        return x


clip = torch.compile(Clip(max_norm=1.0))
