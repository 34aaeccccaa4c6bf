import logging
import math

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)


def evaluate(model, loader):
    total = 0.0
    for step, (inputs, targets) in enumerate(loader):
        loss = F.cross_entropy(model(inputs), targets)
        print(f"ppl {math.exp(loss.item()):.2f}")
        logger.info("ppl %.2f", math.exp(loss.item()))
        total += math.exp(loss.item())
        if math.isnan(loss.item()):
            break
        assert math.isfinite(math.exp(loss.item()))
        decay = math.exp(-step / 100)
        bits = math.log(loss.item(), 2)
    return total
