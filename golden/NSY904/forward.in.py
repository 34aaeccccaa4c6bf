import torch


class Router(torch.nn.Module):
    def forward(self, x: torch.Tensor, scores: torch.Tensor, counts: torch.Tensor):
        active = x[scores > 0]
        rows = (scores > 0).nonzero()
        positions = torch.argwhere(scores > 0)
        picked = torch.masked_select(x, scores > 0)
        experts = torch.unique(counts)
        distinct = counts.unique(sorted=True)
        where_rows = torch.where(scores > 0)
        repeated = torch.repeat_interleave(x, counts)
        x[scores < 0] += 1
        return active, rows, positions, picked, experts, distinct, where_rows, repeated
