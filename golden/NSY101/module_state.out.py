# golden: --unsafe-fixes
from functools import wraps

import torch
from torch import nn


def rope_update(rope_forward):
    """A decorator of forward methods: its wrapper and the helpers it calls are traced."""

    def switch(self, position_ids, device):
        seq_len = torch.max(position_ids) + 1
        limit = self.config.limit
        # moved with the module? the copy is not a buffer
        if not hasattr(self, "long_inv_freq"):
            self.long_inv_freq, _ = self.init_fn(self.config, device)
        self.original_inv_freq = self.original_inv_freq.to(device)
        self.register_buffer(
            "inv_freq",
            torch.where(seq_len > limit, self.long_inv_freq, self.original_inv_freq),
            persistent=False,
        )

    @wraps(rope_forward)
    def wrapper(self, x, position_ids):
        switch(self, position_ids, device=x.device)
        return rope_forward(self, x, position_ids)

    return wrapper


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(4))
        self.small = torch.ones(4)
        self.large = torch.full((4,), 0.5)

    def forward(self, x: torch.Tensor):
        # an attribute assigned a tensor in both branches
        self.current = torch.where(
            x.abs().max() > 10, torch.full((4,), 0.5), torch.ones(4)
        )
        # positive: no set-up
        self.register_buffer("scale", torch.where(x.sum() > 0, self.large, self.small))
        # negative: the arguments differ (persistent or not)
        if x.sum() > 1:
            self.register_buffer("scale", self.large, persistent=False)
        else:
            self.register_buffer("scale", self.small)
        # negative: no else (the buffer keeps its value on the other path)
        if x.sum() > 2:
            self.register_buffer("scale", self.large)
        # negative: the else set-up reads what the then set-up writes
        if x.sum() > 3:
            self.large = self.large * 2
            self.register_buffer("scale", self.large)
        else:
            self.small = self.large + 1
            self.register_buffer("scale", self.small)
        # negative: a set-up that prints
        if x.sum() > 4:
            print("large")
            self.register_buffer("scale", self.large)
        else:
            self.register_buffer("scale", self.small)
        # negative: the set-up binds a name read later
        if x.sum() > 5:
            factor = 2
            self.register_buffer("scale", self.large)
        else:
            factor = 3
            self.register_buffer("scale", self.small)
        return x * self.scale * factor
