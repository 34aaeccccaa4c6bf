# golden: --unsafe-fixes
import torch
from warnings import warn as w
from logging import info as log_info
import logging as L


class M(torch.nn.Module):
    def forward(self, x):
        w("careful")
        log_info("hello")
        L.warning("x")
        print("y")
        return x


def helper_not_output(x):
    return x


class N(torch.nn.Module):
    def forward(self, x):
        helper_not_output(x)
        return x
