import torch
from transformers.utils import logging
from nosync_fix.runtime import call_in_graph

logger = logging.get_logger(__name__)


def check_inputs(x):
    call_in_graph(
        __name__,
        "logger.warning_once",
        "`use_cache=True` is incompatible with gradient checkpointing.",
    )
    return x


def unrelated():
    logger.warning_once("not called from traced code")


class Stack(torch.nn.Module):
    def _warn(self):
        call_in_graph(__name__, "logger.warning_once", "from a method")

    def forward(self, x):
        self._warn()
        return check_inputs(x) + 1


@torch.compile(backend="aot_eager")
def step(x):
    call_in_graph(__name__, "print", "compiled")
    return x + 1
