import torch
import torch.nn.functional as F


def fit(model, loader, epochs):
    all_losses = []
    per_epoch = []
    for epoch in range(epochs):
        preds = []
        for x, y in loader:
            out = model(x)
            loss = F.cross_entropy(out, y)
            all_losses.append(loss.item())
            preds.extend(torch.argmax(out, 1).tolist())
        per_epoch.append(preds)
        print(epoch, len(all_losses), sum(all_losses) / len(all_losses))
    return all_losses, per_epoch
