# golden: --unsafe-fixes
import torch


def collect(model, loader):
    outputs = []
    labels = []
    for batch in loader:
        out = model(batch["x"])
        outputs.append(out.cpu())
        labels.extend(batch["y"].tolist())
    return outputs, labels
