import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for inputs, targets in loader:
        loss = F.mse_loss(model(inputs), targets)
        previous = loss.detach().clone()
        loss.mul_(0.5)
        l1 = F.l1_loss(model(inputs), targets)
        penalty = l1 * previous.to(l1)
        penalty.backward()
