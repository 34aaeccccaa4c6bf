import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer):
    total_loss = 0.0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss.detach().double()
    total_loss = float(total_loss)
    return total_loss / len(loader)
