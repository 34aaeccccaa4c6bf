import torch


def train(model, loader):
    for batch in loader:
        outputs = model(**batch)
        print(f"loss {outputs.loss.item():.4f}")
