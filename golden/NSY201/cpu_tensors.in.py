import torch


def evaluate(model, loader, device):
    total = 0.0
    count = 0
    on_device = 0.0
    for inputs, targets in loader:
        scores = model(inputs.to(device)).cpu()
        counts = torch.zeros(3, device="cpu")
        total += scores.sum().item()
        count += int(counts.sum())
        on_device += model(inputs.to(device)).sum().item()
    return total / count, on_device
