import logging

import torch

logger = logging.getLogger(__name__)


class Block(torch.nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            logger.warning("only in eager mode")
        log = print
        log("a local alias is not followed")
        return x
