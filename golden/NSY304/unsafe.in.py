# golden: --unsafe-fixes
import logging
import warnings

import torch

logger = logging.getLogger(__name__)


class Block(torch.nn.Module):
    def forward(self, x):
        logger.warning("deprecated %s", "path")
        logging.info("plain")
        warnings.warn("careful", FutureWarning, stacklevel=2)
        return x * 2
