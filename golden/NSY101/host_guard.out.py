# golden: --all-paths
import torch
from torch import nn


class Layer(nn.Module):
    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states * 2
        # BART's fp16 guard: the dtype test stays an `if`, the device test selects
        if hidden_states.dtype == torch.float16:
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.where(
                torch.isinf(hidden_states).any() | torch.isnan(hidden_states).any(),
                torch.clamp(hidden_states, min=-clamp_value, max=clamp_value),
                hidden_states,
            )
        return hidden_states


def two_host_facts(x: torch.Tensor, training: bool):
    y = x.float()
    if training and y.dim() == 2:
        y = torch.where(y.abs().max() > 100, y * 0.5, y)
    return y


def clamp_value_used_later(h: torch.Tensor):
    h = h.float()
    if h.dtype == torch.float16 and torch.isinf(h).any():
        clamp_value = torch.finfo(h.dtype).max - 1000
        h = torch.clamp(h, min=-clamp_value, max=clamp_value)
    return h, clamp_value


def with_else(h: torch.Tensor, training: bool):
    h = h.float()
    if training and h.abs().max() > 100:
        h = h * 0.5
    else:
        h = h * 2
    return h


def finfo_of_unknown_dtype(h: torch.Tensor, training: bool):
    if training and torch.isinf(h).any():
        clamp_value = torch.finfo(h.dtype).max - 1000
        h = torch.clamp(h, min=-clamp_value, max=clamp_value)
    return h
