import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, layers: nn.ModuleList, layerdrop: float):
        super().__init__()
        self.layers = layers
        self.layerdrop = layerdrop

    def forward(self, x):
        for layer in self.layers:
            if self.training:
                # A CPU tensor: nothing to wait for, but torch.compile breaks the graph.
                dropout_probability = torch.rand([])
                if dropout_probability < self.layerdrop:  # positive
                    continue
            if torch.rand([], device=x.device) < self.layerdrop:  # edge: on the device
                continue
            x = layer(x)
        return x


def skip_some(model, batches, config):
    for batch in batches:
        if torch.rand([]) < config.layerdrop:  # negative: a CPU tensor, not traced
            continue
        model(batch)
