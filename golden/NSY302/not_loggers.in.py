import logging

import torch
from accelerate.logging import get_logger

logger = get_logger(__name__)
adapter = logging.LoggerAdapter(logging.getLogger(__name__), {"rank": 0})


class Trainer:
    def step(self, model, x):
        loss = model(x).sum()
        logger.info("loss %.4f", loss.item())
        adapter.info("loss %.4f", loss.item())
        self.log.info("loss %.4f", loss.item())
        return loss
