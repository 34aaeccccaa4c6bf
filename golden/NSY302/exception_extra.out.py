import logging

import torch
import torch.nn.functional as F
from nosync_fix.runtime import deferred_log, item

log: logging.Logger = logging.getLogger("trainer")


def train(model, loader):
    for step, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        try:
            loss.backward()
        except RuntimeError:
            deferred_log(log.exception, "backward failed at loss %.4f", item(loss))
        deferred_log(
            log.info,
            "loss %(loss).3f",
            {"loss": item(loss)},
            extra={"step": step},
            stacklevel=1,
        )
