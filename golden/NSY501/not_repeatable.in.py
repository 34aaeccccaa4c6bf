import torch
import torch.nn.functional as F


def train(model, loader):
    for inputs, targets in loader:
        loss = F.cross_entropy(model(inputs), targets)
        scale = loss.item()
        out = F.mse_loss(model(inputs), targets) * scale
        out.backward()
