# golden: --unsafe-fixes
# Regression: a file whose only copies to the host are spelled `.to("cpu")` was never
# checked by NSY202 (its triggers listed `.cpu(` but not `.to(`).
import torch
from nosync_fix.runtime import to_host


def evaluate(model, loader):
    preds = []
    for x in loader:
        out = model(x)
        preds.append(out.detach().clone())
    preds = to_host(preds, "cpu")
    return torch.cat(preds)
