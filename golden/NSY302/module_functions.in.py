import logging
from logging import info

import torch
import torch.nn.functional as F


def train(model, loader):
    for step, (x, y) in enumerate(loader):
        loss = F.mse_loss(model(x), y)
        logging.info(f"step {step} loss {loss.item():.4f}")
        logging.warning("loss %.3f at step %d", loss, step)
        info("loss {:.2f}".format(loss.item()))
        logging.getLogger("train").error("loss %s", loss.item())
