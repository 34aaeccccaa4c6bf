import logging

import torch
import torch.nn.functional as F
from nosync_fix.runtime import deferred_log, fmt, item

logger = logging.getLogger(__name__)


def train(model, loader, optimizer):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        deferred_log(logger.info, "step %d loss %.4f", step, item(loss))
        deferred_log(
            logger.debug, fmt("loss {:.6f} ({:.1f}%)", item(loss), item(loss) * 100)
        )
        deferred_log(logger.log, logging.WARNING, "loss %.2e", item(loss))
