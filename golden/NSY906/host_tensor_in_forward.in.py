import torch
from torch import nn


class RandomDepth(nn.Module):
    def __init__(self, blocks: nn.ModuleList, show):
        super().__init__()
        self.blocks = blocks
        self.show = show

    def forward(self, x):
        # A tensor made on the CPU is read without waiting for the device, but reading
        # it still breaks the graph where torch.compile traces.
        depth = torch.randint(1, len(self.blocks), (1,)).item()  # positive: traced
        self.show(depth)
        for block in self.blocks:
            scale = torch.rand(1, device=x.device)
            x = block(x) * scale
            self.show(scale.item())  # positive: a device value
        return x


def shuffled_order(size, epochs, seed, show):
    generator = torch.Generator()
    generator.manual_seed(seed)
    order = []
    for _ in range(epochs):
        order.extend(torch.randperm(size, generator=generator).tolist())  # negative
        show(torch.randint(0, size, (1,), generator=generator).item())  # negative
        show(torch.randn(1, device="cuda").item())  # edge: a device named
    return order
