# golden: --unsafe-fixes
import math

import torch


class Rescale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.log_scale = torch.nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        scale = math.exp(self.log_scale.item())
        return x * scale
