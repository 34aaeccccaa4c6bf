import torch
import nosync_fix.runtime as nosync_runtime
from nosync_fix.runtime import deferred_print, fmt


def train(model, data):
    for item in data:
        loss = model(item).sum()
        loss.backward()
        deferred_print(fmt("loss {:.3f}", nosync_runtime.item(loss)))
