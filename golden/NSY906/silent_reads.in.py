import logging

import torch

logger = logging.getLogger(__name__)


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(()))
        self.initial = self.scale.item()  # set-up: not a hot path

    def forward(self, x):
        v = self.scale.item()
        logger.warning_once(f"scale {self.scale.item():.3f}")
        self.scale.item()
        return x * self.scale


def evaluate(model, batches):
    for x in batches:
        out = model(x)
        record(out.sum().item())
        peak = helper(out.max().cpu())
        print(peak)
    return 0


def train_step(model, x):
    loss = model(x).mean()
    if loss:
        pass
    return loss.item()


def fit(model, batches, best):
    for x in batches:
        loss = torch.nn.functional.mse_loss(model(x), x)
        loss.backward()
        if loss.item() < best:  # a running minimum with a break: no other rule reports it
            best = loss.item()
            break
    return best


def record(value):
    pass


def helper(value):
    return value
