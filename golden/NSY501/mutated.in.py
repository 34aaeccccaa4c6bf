import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for inputs, targets in loader:
        loss = F.mse_loss(model(inputs), targets)
        previous = float(loss)
        loss.mul_(0.5)
        l1 = F.l1_loss(model(inputs), targets)
        penalty = l1 * previous
        penalty.backward()
