# golden: --unsafe-fixes
import math

import torch


class Normalize(torch.nn.Module):
    def forward(self, x: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
        probs = x.softmax(dim=-1)
        assert not torch.isnan(probs).any()
        assert (probs >= 0).all() and (probs <= 1).all(), "probabilities out of range"
        assert 0 <= probs.min().item() <= 1
        assert torch.equal(probs.argmax(-1), reference.argmax(-1))
        assert torch.allclose(probs.sum(-1), torch.ones(()), atol=1e-5)
        assert math.isfinite(probs.max().item())
        assert int(probs.sum()) == x.shape[0]
        assert probs
        return probs
