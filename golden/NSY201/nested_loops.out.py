import json

import torch
import torch.nn.functional as F


def fit(model, loader, optimizer, epochs, log_path):
    history = []
    for epoch in range(epochs):
        epoch_loss = 0.0
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_loss += loss.detach().double() * x.size(0)
        epoch_loss = float(epoch_loss)
        history.append({"epoch": epoch, "loss": epoch_loss / len(loader.dataset)})
    with open(log_path, "w") as handle:
        json.dump(history, handle)
    return history
