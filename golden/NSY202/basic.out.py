import torch
import torch.nn.functional as F
from nosync_fix.runtime import to_host


def train(model, loader, optimizer):
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    losses = to_host(losses, "item")
    return losses
