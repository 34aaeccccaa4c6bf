import logging

import torch
import torch.nn.functional as F

log: logging.Logger = logging.getLogger("trainer")


def train(model, loader):
    for step, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        try:
            loss.backward()
        except RuntimeError:
            log.exception("backward failed at loss %.4f", loss.item())
        log.info("loss %(loss).3f", {"loss": loss.item()}, extra={"step": step}, stacklevel=1)
