import torch


class Static(torch.nn.Module):
    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        x[x < 0] = 0
        total = x[x > 0].sum()
        count = len(x[x > 0])
        kept = torch.where(x > 0, x, 0)
        gathered = x[index.long()]
        doubled = torch.repeat_interleave(x, 2)
        bounded = torch.repeat_interleave(x, index.long(), output_size=8)
        return total + count + kept.sum() + gathered.sum() + doubled.sum() + bounded.sum()


def host_side(x: torch.Tensor) -> torch.Tensor:
    for _ in range(3):
        x = x[x > 0]
    return x
