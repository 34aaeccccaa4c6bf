# golden: --unsafe-fixes
import torch


class Shapes(torch.nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        assert x.shape == mask.shape
        assert x.dim() == 2, "expected a matrix"
        assert isinstance(x, torch.Tensor)
        assert self.training or not x.requires_grad
        assert x.dtype in (torch.float32, torch.float16)
        return x * mask
