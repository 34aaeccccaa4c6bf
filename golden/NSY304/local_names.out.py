# golden: --unsafe-fixes
import logging

import torch
from nosync_fix.runtime import call_in_graph


class Block(torch.nn.Module):
    def forward(self, x, use_cache=True):
        if use_cache and self.training:
            call_in_graph(
                __name__, "logging.warning", "use_cache=True is ignored in training"
            )  # positive: global
        return x * 2


class Expert(torch.nn.Module):
    def forward(self, x, use_cache=True):
        if use_cache and self.training:
            import logging as log

            # negative: `log` is this function's own name; the module has none
            log.warning("use_cache=True is ignored in training")
        return x * 2


class Shadowed(torch.nn.Module):
    def forward(self, x, verbose=False):
        print = logging.info
        if verbose:
            print("forward")  # edge: a local named like an output function
        return x * 2
