import logging

import torch

logger = logging.getLogger(__name__)
weights = torch.randn(4)
logger.info("initial norm %.3f", weights.norm().item())


def report(model):
    logger.info("mean weight %.4f", model.weight.mean().item())
