# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for inputs, targets in loader:
        loss = F.cross_entropy(model(inputs), targets)
        # the loss must stay finite
        assert torch.isfinite(loss), "loss is not finite"
        assert loss.item() >= 0  # cross-entropy is never negative
        loss.backward()
        optimizer.step()
