# golden: --unsafe-fixes
import torch
from warnings import warn as w
from logging import info as log_info
import logging as L
from nosync_fix.runtime import call_in_graph


class M(torch.nn.Module):
    def forward(self, x):
        call_in_graph(__name__, "w", "careful")
        call_in_graph(__name__, "log_info", "hello")
        call_in_graph(__name__, "L.warning", "x")
        call_in_graph(__name__, "print", "y")
        return x


def helper_not_output(x):
    return x


class N(torch.nn.Module):
    def forward(self, x):
        helper_not_output(x)
        return x
