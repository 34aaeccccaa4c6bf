import sys

import torch
from nosync_fix.runtime import deferred_print, item, tolist


def train(model, data, optimizer):
    for step, batch in enumerate(data):
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        deferred_print("loss", item(loss), sep=": ")
        deferred_print(step, -item(loss), round(item(loss), 3), end=" | ", flush=True)
        deferred_print(
            "grad norm", item(torch.linalg.vector_norm(batch), float), file=sys.stderr
        )
        deferred_print(tolist(batch.sum(dim=0)))
