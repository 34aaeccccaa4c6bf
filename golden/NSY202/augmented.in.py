import torch


def evaluate(model, loader):
    preds = []
    targets = []
    while True:
        batch = next(loader, None)
        if batch is None:
            break
        x, y = batch
        preds += torch.argmax(model(x), 1).tolist()
        targets += y.tolist()
    return preds, targets
