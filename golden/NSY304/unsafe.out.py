# golden: --unsafe-fixes
import logging
import warnings

import torch
from nosync_fix.runtime import call_in_graph

logger = logging.getLogger(__name__)


class Block(torch.nn.Module):
    def forward(self, x):
        call_in_graph(__name__, "logger.warning", "deprecated %s", "path")
        call_in_graph(__name__, "logging.info", "plain")
        call_in_graph(__name__, "warnings.warn", "careful", FutureWarning, stacklevel=2)
        return x * 2
