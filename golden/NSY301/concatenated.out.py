import torch
import torch.nn.functional as F
from nosync_fix.runtime import deferred_print, fmt, item


def train(model, loader):
    for epoch, (x, y) in enumerate(loader):
        loss = F.l1_loss(model(x), y)
        deferred_print(
            fmt("epoch {:3d} "
            "{{literal braces}} "
            "loss {:.4f}",
            epoch, item(loss))
        )
