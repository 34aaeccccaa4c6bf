# golden: --unsafe-fixes
import math

import torch


class Normalize(torch.nn.Module):
    def forward(self, x: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
        probs = x.softmax(dim=-1)
        if __debug__:
            torch._assert_async(~torch.isnan(probs).any())
        if __debug__:
            torch._assert_async(
                (probs >= 0).all() & (probs <= 1).all(), "probabilities out of range"
            )
        if __debug__:
            torch._assert_async((0 <= probs.min()) & (probs.min() <= 1))
        if __debug__:
            torch._assert_async((probs.argmax(-1) == reference.argmax(-1)).all())
        if __debug__:
            torch._assert_async(
                torch.isclose(probs.sum(-1), torch.ones(()), atol=1e-5).all()
            )
        if __debug__:
            torch._assert_async(torch.isfinite(probs.max()))
        if __debug__:
            torch._assert_async(probs.sum().long() == x.shape[0])
        if __debug__:
            torch._assert_async(probs)
        return probs
