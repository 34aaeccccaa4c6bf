import logging

import torch
from nosync_fix.runtime import call_in_graph

logger = logging.getLogger(__name__)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        print("built")  # __init__ is not traced
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x, use_cache=True):
        if use_cache and self.training:
            call_in_graph(
                __name__,
                "print",
                "use_cache=True is incompatible with training",
                "ignoring",
                sep="; ",
            )
        return self.linear(x)


for step in range(3):
    print("step")  # a training loop is not traced code
