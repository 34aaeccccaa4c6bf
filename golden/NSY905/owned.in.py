import logging
import math

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)


@torch.compile(backend="eager")
def train_step(model, x: torch.Tensor, y: torch.Tensor, history):
    hist_buffer = torch.zeros(3)
    loss = F.mse_loss(model(x), y)
    total = 0.0
    if loss.item() > 10:
        loss = loss * 0.1
    total += loss.item()
    history.append(loss.item())
    best = max(0.0, loss.item())
    scaled = x * loss.item()
    weight = loss.item()
    weighted = y * weight
    ppl = math.exp(loss.item())
    print(loss.item())
    logger.info("loss %f", loss.item())
    assert loss.item() >= 0
    buffer = torch.zeros(int(loss.item()))
    count = torch.count_nonzero(y).item() * x
    for i in range(3):
        hist_buffer[i] = loss.item()
    return total, best, scaled, weighted, ppl, buffer, count


def not_compiled(x: torch.Tensor) -> float:
    return x.sum().item()
