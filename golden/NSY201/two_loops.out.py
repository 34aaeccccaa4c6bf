import torch
import torch.nn.functional as F


def epoch(model, train_loader, val_loader):
    total = 0.0
    for x, y in train_loader:
        total += F.cross_entropy(model(x), y).detach().double()
    total = float(total)
    print(f"train {total:.3f}")
    total = 0.0
    with torch.no_grad():
        for x, y in val_loader:
            total += F.cross_entropy(model(x), y).detach().double()
        total = float(total)
    print(f"val {total:.3f}")
