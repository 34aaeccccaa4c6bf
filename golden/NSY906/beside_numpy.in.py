import numpy as np
import torch


def evaluate(batch):
    return batch


def train(model, batches):
    data = np.zeros(100)
    history = []
    for batch in batches:
        loss = evaluate(batch)
        # `loss` may be a tensor (numpy has `.item()` too): reported, no fix.
        lossf = loss.item() * 2
        # numpy values: no read of a device.
        mean = data.mean().item()
        scalar = np.float32(1.0).item()
        # Formatting: str.format and % of tensors.
        hidden = torch.relu(model(batch))
        line = "{:.3f}".format(hidden.mean())
        text = "peak %.2f" % hidden.max()
        note = f"{loss.abs().max():.1f}"  # beside numpy, `.max()` may be numpy's: no report
        plain = f"{loss}"  # unknown, no format spec: not reported
        # A copy to the host is reported once; reading the copy waits for nothing.
        copied = evaluate(batch).cpu()
        peak = copied.max().item()
        history.append((lossf, mean, scalar, line, text, note, plain, peak))
    return history
