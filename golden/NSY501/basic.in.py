import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for inputs, targets in loader:
        logits = model(inputs)
        loss = F.cross_entropy(logits, targets)
        aux = F.mse_loss(logits.mean(), torch.zeros(()))
        weight = loss.item()
        total = loss + aux * weight
        total.backward()
        optimizer.step()
