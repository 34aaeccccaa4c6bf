# golden: --unsafe-fixes
import torch


class Gate(torch.nn.Module):
    def forward(self, x: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
        if x.shape == reference.shape and (x == reference).all():
            return x
        same = x * (
            x.sign().shape == reference.sign().shape
            and (x.sign() == reference.sign()).all()
        )
        while not (x.shape == reference.shape and (x == reference).all()):
            x = reference
        y = (
            x
            if (x.shape == (reference + 1).shape and (x == reference + 1).all())
            else reference
        )
        return same + y
