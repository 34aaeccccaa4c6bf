import logging
from logging import info

import torch
import torch.nn.functional as F
from nosync_fix.runtime import deferred_log, fmt, item


def train(model, loader):
    for step, (x, y) in enumerate(loader):
        loss = F.mse_loss(model(x), y)
        deferred_log(logging.info, fmt("step {} loss {:.4f}", step, item(loss)))
        deferred_log(logging.warning, "loss %.3f at step %d", loss, step)
        deferred_log(info, fmt("loss {:.2f}", item(loss)))
        deferred_log(logging.getLogger("train").error, "loss %s", item(loss))
