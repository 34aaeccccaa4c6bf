# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


class Mixed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = torch.nn.Parameter(torch.tensor([0.3]))

    def forward(self, pred, target):
        l1 = F.l1_loss(pred, target)
        l2 = F.mse_loss(pred, target)
        alpha = self.alpha.item()
        return alpha * l1 + (1 - alpha) * l2
