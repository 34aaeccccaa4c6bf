import torch
import torch.nn as nn


class Checked(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)

    def forward(self, x):
        h = self.net(x)
        if not torch.isfinite(h).all():
            # not a plain validation guard (NSY401's): the branch also changes state
            self.failures = self.failures + 1
            raise ValueError("non-finite activations")
        return h
