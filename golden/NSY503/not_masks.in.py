import torch
import torch.nn.functional as F


def train(model, loader, mask):
    for inputs, labels in loader:
        losses = F.cross_entropy(model(inputs), labels, reduction="none")
        index = labels.argsort()
        by_index = losses[index].sum()
        unknown = losses[mask].sum()
        selected = losses[losses > 0]
        per_row = losses[losses > 0].sum(dim=0)
        losses[losses < 0] = 0
        (by_index + unknown + selected.sum()).backward()
