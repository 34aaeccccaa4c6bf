import torch
import torch.nn.functional as F


def evaluate(model, loader):
    for batch, (x, y) in enumerate(loader):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        correct = (logits.argmax(dim=1) == y).sum()
        print("batch {} loss {:.3f} correct {}".format(batch, loss.item(), correct.item()))
        print("{name}: {value:.2f}".format(name="loss", value=loss.item()))
