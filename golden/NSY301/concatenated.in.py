import torch
import torch.nn.functional as F


def train(model, loader):
    for epoch, (x, y) in enumerate(loader):
        loss = F.l1_loss(model(x), y)
        print(
            f"epoch {epoch:3d} "
            "{literal braces} "
            f"loss {loss.item():.4f}"
        )
