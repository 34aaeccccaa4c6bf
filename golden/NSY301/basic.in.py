import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, epoch):
    for step, (inputs, targets) in enumerate(loader):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        print(f"  scaled {loss.item() * 100:.2f}% lr={optimizer.param_groups[0]['lr']:.2e}")
