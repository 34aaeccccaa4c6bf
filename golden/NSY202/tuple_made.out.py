# golden: --unsafe-fixes
import torch


def evaluate(model, loader):
    # fixed: each name is bound to a new list of its own
    preds, labels = [], []
    for x, y in loader:
        preds.append(model(x).argmax(1).detach())
        labels.append(y.detach().clone())
    if len({(v.dtype, v.device) for v in preds}) == 1:
        preds = torch.cat([v.reshape(1) for v in preds]).tolist()
    else:
        preds = [v.item() for v in preds]
    if len({(v.dtype, v.device) for v in labels}) == 1:
        labels = torch.cat([v.reshape(1) for v in labels]).tolist()
    else:
        labels = [v.item() for v in labels]
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
    if len({(v.dtype, v.device) for v in preds}) == 1:
        preds = torch.cat([v.reshape(1) for v in preds]).tolist()
    else:
        preds = [v.item() for v in preds]
    return preds, seen, first, second


def starred(model, loader):
    # left alone: the starred target takes a list of the rest
    preds, *rest = [], [], []
    for x in loader:
        preds.append(model(x).sum().item())
    return preds, rest
