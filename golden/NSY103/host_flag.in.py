import torch
from torch import nn


class Encoder(nn.Module):
    def forward(self, hidden_states, attention_mask, output_attentions=False):
        is_index_global_attn = attention_mask > 0
        # Longformer: the flag only picks code paths
        is_global_attn = is_index_global_attn.flatten().any().item()
        all_attentions = () if output_attentions else None
        for layer in self.layers:
            hidden_states = layer(hidden_states, is_global_attn=is_global_attn)
            if output_attentions and is_global_attn:
                all_attentions = all_attentions + (hidden_states,)
        return hidden_states, all_attentions


class Counted(nn.Module):
    def forward(self, x: torch.Tensor):
        # the value is used as a number: not a flag (other rules' business)
        n = (x > 0).any().item()
        return x * n
