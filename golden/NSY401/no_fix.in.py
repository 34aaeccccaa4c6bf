# golden: --unsafe-fixes
import torch


class Checked(torch.nn.Module):
    def forward(self, x: torch.Tensor, limit: float) -> torch.Tensor:
        y = x.exp()
        assert y.max().item() < limit, f"overflow: {y.max()}"
        y = y + 1; assert (y > 0).all()
        assert (y > 0).all() and limit > 0
        assert y.sum().item() + 1 > 0
        if limit > 0: assert (y > 1).all()
        return y


class Sampled(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert (x > 0).all() or (torch.rand_like(x) > 0.5).all()
        return x
