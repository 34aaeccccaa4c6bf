import logging

import torch
from nosync_fix.runtime import deferred_print, fmt, item

logger = logging.getLogger(__name__)


def train(model, loader, optimizer, tracker, every: int):
    total = 0.0
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        if step % every == 0:
            # the tracker reads the loss first (no fix for it): the print waits for nothing
            tracker.info("step %d loss %.4f", step, loss.item())
            print(f"step={step} loss={loss.item():.4f}")
            print(f"again {loss.item():.2f}")
        if step % every == 1:
            # a standard logger: NSY302 defers it, so the print is deferred too
            logger.info("step %d loss %.4f", step, loss.item())
            deferred_print(fmt("logged {:.4f}", item(loss)))
        total += loss.item()
        deferred_print(fmt("after the sum {:.3f}", item(loss)))
    return total
