# golden: --unsafe-fixes
import torch
import torch.nn as nn


class Stabilizer(nn.Module):
    def __init__(self, limit: float):
        super().__init__()
        self.limit = limit
        self.net = nn.Linear(16, 16)

    def forward(self, x):
        h = self.net(x)
        h = torch.where(h.abs().max() > self.limit, h * 0.5, h)
        return h
