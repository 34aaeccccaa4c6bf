import torch
import torch.nn.functional as F


def train(model, loader):
    for inputs, targets in loader:
        losses = F.mse_loss(model(inputs), targets, reduction="none")
        positive = torch.where(losses > 0, losses, 0).sum()
        finite = torch.where(torch.isfinite(losses), losses, 0).sum()
        keep = (losses > 0.1) & ~torch.isnan(losses)
        kept = torch.where(keep, losses, 0).sum()
        flags = losses > 1.0
        big = torch.where(flags, flags, 0).sum()
        (positive + finite + kept).backward()
