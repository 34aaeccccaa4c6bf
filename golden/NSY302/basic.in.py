import logging

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)


def train(model, loader, optimizer):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        logger.info("step %d loss %.4f", step, loss.item())
        logger.debug(f"loss {loss.item():.6f} ({loss.item() * 100:.1f}%)")
        logger.log(logging.WARNING, "loss %.2e", loss.item())
