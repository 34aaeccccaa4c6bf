# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


class Loss(torch.nn.Module):
    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        errors = F.l1_loss(pred, target, reduction="none")
        large = torch.where(errors > 1.0, errors, 0).sum() / (errors > 1.0).sum()
        valid = target >= 0
        masked = torch.where(valid, errors, 0).sum() / valid.sum()
        return large + masked
