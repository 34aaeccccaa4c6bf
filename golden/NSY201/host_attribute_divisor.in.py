import torch
import torch.nn.functional as F


def train(model, loader, optimizer, args):
    total = 0.0
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() / args.accum_steps
    print(f"{total:.4f}")
