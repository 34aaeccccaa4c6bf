import torch
from torch import nn


def shuffle_in_place(order, generator):
    # A sampler's Fisher-Yates shuffle: the index is drawn on the CPU, read without a wait.
    for i in range(len(order) - 1, 0, -1):
        j = torch.randint(0, i + 1, (1,), generator=generator).item()  # negative
        order[i], order[j] = order[j], order[i]
    return order


class RandomCrop(nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def forward(self, x):
        # The same read in forward waits for nothing but breaks the graph.
        start = torch.randint(0, x.shape[-1] - self.size, (1,)).item()  # positive
        x = x[..., start:start + self.size]
        steps = torch.randint(1, 3, (1,), device=x.device)
        for _ in range(int(steps)):  # edge: on the device
            x = x * 2
        return x
