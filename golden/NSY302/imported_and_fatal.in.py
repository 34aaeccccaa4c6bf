# Regression: the pre-filter took `warning(...)` imported from logging, and the
# logger's `fatal`, for no output, and hid these findings.
import logging
from logging import warning

import torch

log = logging.getLogger(__name__)


def train(model, loader):
    for x in loader:
        loss = torch.relu(model(x)).sum()
        warning("loss %s", loss)


def check(model, loader):
    for x in loader:
        loss = torch.relu(model(x)).sum()
        log.fatal("loss %s", loss)
