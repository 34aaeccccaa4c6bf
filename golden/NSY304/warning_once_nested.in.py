import torch
from transformers.utils import logging

logger = logging.get_logger(__name__)


def check_inputs(x):
    logger.warning_once("`use_cache=True` is incompatible with gradient checkpointing.")
    return x


def unrelated():
    logger.warning_once("not called from traced code")


class Stack(torch.nn.Module):
    def _warn(self):
        logger.warning_once("from a method")

    def forward(self, x):
        self._warn()
        return check_inputs(x) + 1


@torch.compile(backend="aot_eager")
def step(x):
    print("compiled")
    return x + 1
