# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


def train(model, loader):
    for inputs, labels in loader:
        losses = F.cross_entropy(model(inputs), labels, reduction="none")
        valid = labels != -100
        per_token = losses.sum() / len(losses[valid])
        positive = losses.sum() / losses[losses > 0].numel()
        n_valid = valid.nonzero().size(0)
        mean = losses.sum() / n_valid
        shaped = losses.sum() / losses[valid].shape[0]
        scaled = torch.count_nonzero(valid).item() * losses
        steps = len(losses[valid])
        for _ in range(steps):
            pass
        (per_token + positive + mean + shaped + scaled.sum()).backward()
