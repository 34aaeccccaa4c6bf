import logging

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)


def train(model, loader):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        logger.info("loss %s", loss)
        logger.info(loss)
        logger.info("diverged: %s", loss.item() > 10)
        logger.log(int(loss.item()), "level from the device")
