import torch
import torch.nn.functional as F


def evaluate(model, loader):
    for inputs, targets in loader:
        losses = F.cross_entropy(model(inputs), targets, reduction="none")
        summed = F.cross_entropy(model(inputs), targets, reduction="sum")
        valid = losses > 0
        count = valid.sum().detach()
        mean = summed / count.to(summed)
        mean.backward()
