# golden: --unsafe-fixes
import torch


class Gate(torch.nn.Module):
    def forward(self, x: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
        if torch.equal(x, reference):
            return x
        same = x * torch.equal(x.sign(), reference.sign())
        while not x.equal(reference):
            x = reference
        y = x if torch.equal(x, reference + 1) else reference
        return same + y
