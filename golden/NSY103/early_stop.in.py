import torch
import torch.nn.functional as F


def fit(model, loader, optimizer, tol: float):
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        if loss.item() < tol:
            break
