# golden: --unsafe-fixes
import torch
import torch.nn as nn


class ScaledRotary(nn.Module):
    def __init__(self, dim: int, short_factor: list, long_factor: list, limit: int):
        super().__init__()
        self.dim = dim
        self.short_factor = short_factor
        self.long_factor = long_factor
        self.limit = limit
        self.register_buffer("short", torch.tensor(short_factor), persistent=False)
        self.register_buffer("long", torch.tensor(long_factor), persistent=False)

    def forward(self, x: torch.Tensor, positions: torch.Tensor):
        length = torch.max(positions) + 1
        # both paths copy a Python list to the device: torch.where would copy both
        if length > self.limit:
            factors = torch.tensor(self.long_factor, dtype=torch.float32, device=x.device)
        else:
            factors = torch.tensor(self.short_factor, dtype=torch.float32, device=x.device)
        scale = torch.where(length > 2 * self.limit, factors, factors * 1.0)
        picked = torch.tensor(self.long_factor, device=x.device) if length > 1 else self.short
        return x * factors[0] + scale[0] + picked[0]

    def made_once_step(self, x: torch.Tensor, positions: torch.Tensor):
        length = torch.max(positions) + 1
        # the buffers were made once: selecting between them copies nothing
        factors = torch.where(length > self.limit, self.long, self.short)
        return x * factors[0]

    def on_the_cpu_step(self, x: torch.Tensor, positions: torch.Tensor):
        length = torch.max(positions) + 1
        factors = torch.where(
            length > self.limit,
            torch.tensor(self.long_factor, device="cpu"),
            torch.tensor(self.short_factor, device="cpu"),
        )
        return x * factors[0]
