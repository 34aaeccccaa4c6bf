import math

import numpy as np
import torch


def train(model, loader, fill):
    for x in loader:
        out = torch.relu(model(x))
        mask = out > 1
        # positive: the value is a tensor selection, a device tensor, or read first
        out[mask] = x[mask]
        out[mask] = x.max()
        out[mask] += 1
        # negative: a Python number makes index_put_ a masked_fill_: no count, no wait
        out[mask] = 0
        out[out < 0] = -float("inf")
        out[mask] = torch.finfo(out.dtype).min
        out[mask] = math.inf
        out[mask] = -np.inf
        out[mask] = -1e4 * 2
        out[mask] = True
        # edge: a name's value is not followed, so it is still reported
        out[mask] = fill
        out.sum().backward()
