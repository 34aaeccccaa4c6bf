# golden: --unsafe-fixes
import torch


def check_checkpoint(state):
    weight = torch.as_tensor(state["weight"])
    assert torch.isfinite(weight).all(), "corrupt checkpoint"
    return weight


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not torch.compiler.is_compiling():
            assert torch.isfinite(x).all()
        return x * 2
