# golden: --unsafe-fixes
# Issue 20: an accumulator that starts as the int 0 summing a loss of unknown dtype
# must be summed in float64 (as Python sums), not in the loss's own float32.
import torch
from nosync_fix.runtime import python_precision


def validate(model, valid_dl, loss_fn, device):
    losses = 0
    model.eval()
    for src, tgt in valid_dl:
        src = src.to(device)
        tgt = tgt.to(device)
        logits = model(src)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))
        losses += python_precision(loss.detach())
    losses = losses.item() if isinstance(losses, torch.Tensor) else losses
    return losses / len(list(valid_dl))
