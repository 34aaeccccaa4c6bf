# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


def train(model, loader, scale_buffer: torch.Tensor):
    for inputs, targets in loader:
        loss = F.mse_loss(model(inputs), targets)
        factor = scale_buffer.detach().reshape(()).trunc()
        weighted = loss * factor.to(loss)
        weighted.backward()
