# golden: --unsafe-fixes
import torch


class Gate(torch.nn.Module):
    def forward(self, x: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
        if (x == reference).all():
            return x
        same = x * (x.sign() == reference.sign()).all()
        while not (x == reference).all():
            x = reference
        y = x if (x == reference + 1).all() else reference
        return same + y
