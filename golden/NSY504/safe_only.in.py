import torch


class Gate(torch.nn.Module):
    def forward(self, x: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
        if torch.equal(x, reference):
            return x
        return reference
