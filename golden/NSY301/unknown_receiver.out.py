import torch
from nosync_fix.runtime import deferred_print, fmt, item


def train(model, loader):
    for batch in loader:
        outputs = model(**batch)
        deferred_print(fmt("loss {:.4f}", item(outputs.loss)))
