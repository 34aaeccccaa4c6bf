import json

import torch
import torch.nn.functional as F


def to_json(model, loader):
    total = 0.0
    steps = 0
    for x, y in loader:
        total += F.mse_loss(model(x), y).detach().double()
        steps += 1
    total = float(total)
    return json.dumps({"loss": total, "steps": steps})


def into_containers(model, loader, history):
    total = 0.0
    for x, y in loader:
        total += F.mse_loss(model(x), y).detach().double()
    total = float(total)
    history.append(total)
    summary = {"loss": total}
    values = [total for _ in range(2)]
    return summary, values


def lazily(model, loader):
    total = 0.0
    for x, y in loader:
        total += F.mse_loss(model(x), y).item()
    return (total for _ in range(2))


def returned(model, loader):
    total: float = 0.0
    for x, y in loader:
        total += F.mse_loss(model(x), y).detach().double()
    total = float(total)
    return total
