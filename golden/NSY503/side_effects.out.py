# golden: --unsafe-fixes
import torch


class Dropped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        random_rows = self.linear(x)[torch.rand_like(x) > 0.5].sum()
        kept_rows = torch.where(x > 0, self.linear(x), 0).sum()
        return random_rows + kept_rows
