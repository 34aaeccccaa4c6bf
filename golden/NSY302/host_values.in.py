import logging
import time

import torch

logger = logging.getLogger(__name__)


def train(model, loader, epochs):
    start = time.time()
    for epoch in range(epochs):
        for step, x in enumerate(loader):
            out = model(x)
            logger.info("epoch %d step %d shape %s", epoch, step, out.shape)
            logger.info(f"elapsed {time.time() - start:.1f}s")
    logger.info("done")
