import torch


def evaluate(model, batches):
    correct = 0
    seen = 0
    for x, y in batches:
        logits = model(x)
        pred = torch.argmax(logits, dim=1)
        correct += (pred == y).sum().detach()
        seen += y.size(0)
    correct = int(correct)
    return correct / max(seen, 1)
