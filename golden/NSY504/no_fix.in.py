# golden: --unsafe-fixes
import torch


def train(model, loader, previous: torch.Tensor):
    matches = 0
    for inputs, targets in loader:
        preds = model(inputs).argmax(-1)
        same = torch.equal(preds, previous)
        matches += torch.equal(preds, targets)
        print(torch.equal(preds, targets))
        assert torch.equal(preds.shape[0] * torch.ones(()), torch.ones(()) * len(targets))
    return same, matches
