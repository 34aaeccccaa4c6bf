# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


def train(model, loader):
    for inputs, labels in loader:
        losses = F.cross_entropy(model(inputs), labels, reduction="none")
        valid = labels != -100
        per_token = losses.sum() / valid.sum()
        positive = losses.sum() / (losses > 0).sum()
        n_valid = valid.sum()
        mean = losses.sum() / n_valid
        shaped = losses.sum() / valid.sum()
        scaled = valid.sum().to(losses) * losses
        steps = len(losses[valid])
        for _ in range(steps):
            pass
        (per_token + positive + mean + shaped + scaled.sum()).backward()
