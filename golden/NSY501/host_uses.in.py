import torch
import torch.nn.functional as F


def train(model, loader, optimizer, history):
    for inputs, targets in loader:
        loss = F.cross_entropy(model(inputs), targets)
        value = loss.item()
        print(value)
        best = loss.item()
        if best < 0.1:
            break
        steps = int(loss)
        for _ in range(steps):
            pass
        scale = float(loss)
        scale = scale * 2
        kept = loss.item()
        history.append(kept)
        returned = loss.item()
    return returned
