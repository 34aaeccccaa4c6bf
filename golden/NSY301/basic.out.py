import torch
import torch.nn.functional as F
from nosync_fix.runtime import deferred_print, fmt, item


def train_epoch(model, loader, optimizer, epoch):
    for step, (inputs, targets) in enumerate(loader):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        deferred_print(fmt("epoch {} step {} loss {:.4f}", epoch, step, item(loss)))
        deferred_print(
            fmt(
                "  scaled {:.2f}% lr={:.2e}",
                item(loss) * 100,
                optimizer.param_groups[0]['lr'],
            )
        )
