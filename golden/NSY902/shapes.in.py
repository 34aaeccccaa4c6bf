import math

import torch
import torch.nn.functional as F


def pad_step(tokens: torch.Tensor, lengths: torch.Tensor, counts: torch.Tensor):
    for _ in range(2):
        padded = torch.zeros(len(lengths), int(lengths.max()))
        rows = tokens.view(-1, int(lengths[0]))
        half = tokens.new_zeros((math.ceil(lengths.float().mean().item() / 2), 4))
        parts = torch.split(tokens, counts.tolist())
        wide = F.pad(tokens, (0, int(lengths.max()) - tokens.shape[-1]))
        longest = lengths.max().item()
        buffer = torch.empty(longest + 1)
    return padded, rows, half, parts, wide, buffer
