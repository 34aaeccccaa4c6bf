# golden: --unsafe-fixes
import contextlib
import io

import torch


def run(model, data):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        for x in data:
            loss = model(x).sum()
            loss.backward()
            print(f"loss {loss.item():.3f}")
    return buffer.getvalue()
