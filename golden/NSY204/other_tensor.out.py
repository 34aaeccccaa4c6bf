# golden: --unsafe-fixes
import torch


def scale(batches, temperature: torch.Tensor, counts: torch.Tensor):
    out = []
    for x in batches:
        x = torch.as_tensor(x, dtype=torch.float32)
        logits = x * temperature.detach()
        frac = x / counts.sum().detach()
        out.append(logits + frac)
    return out
