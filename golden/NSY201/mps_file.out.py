import torch
import torch.nn.functional as F


def pick_device():
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def train_epoch(model, loader, optimizer, device):
    total_loss = 0.0
    correct = 0
    for inputs, targets in loader:
        optimizer.zero_grad()
        out = model(inputs.to(device))
        loss = F.cross_entropy(out, targets.to(device))
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        correct += (out.argmax(1) == targets).sum().detach()
    correct = int(correct)
    return total_loss / len(loader), correct
