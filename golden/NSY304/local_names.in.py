# golden: --unsafe-fixes
import logging

import torch


class Block(torch.nn.Module):
    def forward(self, x, use_cache=True):
        if use_cache and self.training:
            logging.warning("use_cache=True is ignored in training")  # positive: global
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
