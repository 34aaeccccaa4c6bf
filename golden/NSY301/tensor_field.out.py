import torch
from nosync_fix.runtime import deferred_print, fmt


def train(weights, data):
    for step, x in enumerate(data):
        loss = ((weights - x) ** 2).sum()
        loss.backward()
        deferred_print(fmt("step {}: {:.5f} {} {!r}", step, loss, loss, loss))
