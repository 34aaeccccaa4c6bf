import math

import torch
import torch.nn.functional as F


def train(model, loader):
    for inputs, targets in loader:
        loss = F.mse_loss(model(inputs), targets)
        weight = F.l1_loss(model(inputs), targets)
        (weight * math.exp(loss.item())).backward()
