import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layer = nn.ModuleList(layers)

    def forward(self, hidden_states, attention_mask=None, output_attentions=False):
        is_index_global_attn = attention_mask > 0
        is_global_attn = is_index_global_attn.flatten().any().item()
        all_global = () if (output_attentions and is_global_attn) else None
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states, is_global_attn=is_global_attn)
        return hidden_states, all_global


class Scaled(nn.Module):
    def forward(self, x, mask):
        any_set = mask.any().item()
        return torch.mul(x, any_set)
