# golden: --unsafe-fixes

import torch


class Rescale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.log_scale = torch.nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        scale = torch.exp(self.log_scale.detach().double().reshape(()))
        return x * scale.to(x)
