# golden: --unsafe-fixes
import contextlib
import io

import torch
from nosync_fix.runtime import deferred_print, fmt, item


def run(model, data):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        for x in data:
            loss = model(x).sum()
            loss.backward()
            deferred_print(fmt("loss {:.3f}", item(loss)))
    return buffer.getvalue()
