import torch
from torch import nn


class LongRope(nn.Module):
    def forward(self, x: torch.Tensor, position_ids: torch.Tensor):
        seq_len = torch.max(position_ids) + 1
        if seq_len > self.original_max_position_embeddings:
            if not hasattr(self, "long_inv_freq"):
                self.long_inv_freq = self.rope_init_fn(self.config, x.device, seq_len=seq_len)
            self.register_buffer("inv_freq", self.long_inv_freq, persistent=False)
        else:
            self.original_inv_freq = self.original_inv_freq.to(x.device)
            self.register_buffer("inv_freq", self.original_inv_freq, persistent=False)
        return x
