import json

import torch
import torch.nn.functional as F
from nosync_fix.runtime import to_host


def returned_and_dumped(model, loader, path):
    losses = []
    for x, y in loader:
        losses.append(F.mse_loss(model(x), y).detach())
    losses = to_host(losses, "item")
    with open(path, "w") as handle:
        json.dump({"losses": losses}, handle)
    return {"losses": losses}


def shared_before(model, loader):
    losses = []
    history = {"losses": losses}
    for x, y in loader:
        losses.append(F.mse_loss(model(x), y).item())
    return history


class Trainer:
    def run(self, model, loader):
        losses = []
        self.losses = losses
        for x, y in loader:
            losses.append(F.mse_loss(model(x), y).item())
            self.log_losses.append(F.mse_loss(model(x), y).item())


def given(model, loader, losses):
    for x, y in loader:
        losses.append(F.mse_loss(model(x), y).item())


def closure(model, loader):
    losses = []

    def mean():
        return sum(losses) / len(losses)

    for x, y in loader:
        losses.append(F.mse_loss(model(x), y).item())
    return mean()


def interrupted(model, loader):
    losses = []
    try:
        for x, y in loader:
            losses.append(F.mse_loss(model(x), y).item())
    except KeyboardInterrupt:
        pass
    return losses
