import numpy as np
import torch
import torch.nn.functional as F


def train(model, loader, epochs: int):
    losses = torch.zeros(epochs)
    norms = np.zeros(epochs)
    counts = torch.zeros(epochs, dtype=torch.long).cpu()
    for epoch in range(epochs):
        loss = F.mse_loss(model(loader[epoch]), loader[epoch])
        losses[epoch] = loss
        norms[epoch] = loss.item()
        counts[epoch] += loss.detach().long()
    return losses, norms, counts


def estimate_loss(model, batches, eval_iters: int):
    losses = torch.zeros(eval_iters)
    for k in range(eval_iters):
        logits, loss = model(batches[k])
        losses[k] = loss.item()
    return losses.mean()
