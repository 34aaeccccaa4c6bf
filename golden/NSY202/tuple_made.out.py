# golden: --unsafe-fixes
import torch
from nosync_fix.runtime import to_host


def evaluate(model, loader):
    # fixed: each name is bound to a new list of its own
    preds, labels = [], []
    for x, y in loader:
        preds.append(model(x).argmax(1).detach())
        labels.append(y.detach().clone())
    preds = to_host(preds, "item")
    labels = to_host(labels, "item")
    return preds, labels


def aliased(model, loader, shared):
    # left alone: `seen` is the caller's list, and `a = b = []` is one list twice
    preds, seen = [], shared
    first = second = []
    for x, y in loader:
        preds.append(model(x).sum().detach())
        seen.append(y.item())
        first.append(y.item())
        second.append(y.item())
    preds = to_host(preds, "item")
    return preds, seen, first, second


def starred(model, loader):
    # left alone: the starred target takes a list of the rest
    preds, *rest = [], [], []
    for x in loader:
        preds.append(model(x).sum().item())
    return preds, rest
