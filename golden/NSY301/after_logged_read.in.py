import logging

import torch

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
            print(f"logged {loss.item():.4f}")
        total += loss.item()
        print(f"after the sum {loss.item():.3f}")
    return total
