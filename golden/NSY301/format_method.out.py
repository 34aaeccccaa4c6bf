import torch
import torch.nn.functional as F
from nosync_fix.runtime import deferred_print, fmt, item


def evaluate(model, loader):
    for batch, (x, y) in enumerate(loader):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        correct = (logits.argmax(dim=1) == y).sum()
        deferred_print(
            fmt("batch {} loss {:.3f} correct {}", batch, item(loss), item(correct))
        )
        deferred_print(fmt("{name}: {value:.2f}", name="loss", value=item(loss)))
