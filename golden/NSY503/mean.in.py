# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


class Loss(torch.nn.Module):
    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        errors = F.l1_loss(pred, target, reduction="none")
        large = errors[errors > 1.0].mean()
        valid = target >= 0
        masked = errors[valid].mean()
        return large + masked
