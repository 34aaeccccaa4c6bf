# golden: --unsafe-fixes
import torch


def scale(batches, temperature: torch.Tensor, counts: torch.Tensor):
    out = []
    for x in batches:
        x = torch.as_tensor(x, dtype=torch.float32)
        logits = x * temperature.item()
        frac = x / float(counts.sum())
        out.append(logits + frac)
    return out
