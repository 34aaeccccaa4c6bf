import torch
import torch.nn.functional as F
from nosync_fix.runtime import deferred_print, item, percent_fmt


def train(model, loader, optimizer):
    for step, (x, y) in enumerate(loader):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        deferred_print(percent_fmt("step %d loss %.4f", (step, item(loss))))
        deferred_print(percent_fmt("loss %.2e", item(loss)))
        deferred_print(percent_fmt("loss %.3f (step %d)", (loss, step)))
        deferred_print(percent_fmt("%(loss).2f", {"loss": item(loss)}))
