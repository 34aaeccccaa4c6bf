# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


def train(model, loader):
    for inputs, labels in loader:
        losses = F.cross_entropy(model(inputs), labels, reduction="none")
        valid = labels != -100
        total = torch.where(valid, losses, 0).sum()
        total.backward()
