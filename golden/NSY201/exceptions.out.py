import torch
import torch.nn.functional as F


def interrupted(model, loader):
    total = 0.0
    try:
        for x, y in loader:
            total += F.cross_entropy(model(x), y).item()
    except KeyboardInterrupt:
        print("stopped")
    return total


def finally_reads(model, loader):
    total = 0.0
    try:
        for x, y in loader:
            total += F.cross_entropy(model(x), y).item()
    finally:
        print(total)


def handled_inside(model, loader):
    total = 0.0
    for x, y in loader:
        try:
            loss = F.cross_entropy(model(x), y)
        except RuntimeError:
            continue
        total += loss.detach().double()
    total = float(total)
    return total


def reraised(model, loader):
    total = 0.0
    try:
        for x, y in loader:
            total += F.cross_entropy(model(x), y).detach().double()
        total = float(total)
    finally:
        model.train()
    return total
