# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


def train(model, loader, scale_buffer: torch.Tensor):
    for inputs, targets in loader:
        loss = F.mse_loss(model(inputs), targets)
        factor = int(scale_buffer)
        weighted = loss * factor
        weighted.backward()
