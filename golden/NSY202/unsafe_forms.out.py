# golden: --unsafe-fixes
import torch
from nosync_fix.runtime import to_host


def collect(model, loader):
    outputs = []
    labels = []
    for batch in loader:
        out = model(batch["x"])
        outputs.append(out.cpu())
        labels.append(batch["y"].detach().clone())
    labels = to_host(labels, "extend")
    return outputs, labels
