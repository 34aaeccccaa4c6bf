# golden: --unsafe-fixes
# A sum that starts as a float needs no run-time dtype test: every read becomes float64.
import torch


def validate(model, loader, loss_fn):
    losses = 0.0
    for x, y in loader:
        losses += loss_fn(model(x), y).item()
    return losses / len(loader)
