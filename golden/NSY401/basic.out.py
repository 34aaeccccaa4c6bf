# golden: --unsafe-fixes
import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for inputs, targets in loader:
        loss = F.cross_entropy(model(inputs), targets)
        # the loss must stay finite
        if __debug__:
            torch._assert_async(torch.isfinite(loss), "loss is not finite")
        if __debug__:
            torch._assert_async(loss >= 0)  # cross-entropy is never negative
        loss.backward()
        optimizer.step()
