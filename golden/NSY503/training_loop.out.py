# golden: --unsafe-fixes
# Issue 18, form d: a masked mean in a training loop. Where the per-token loss is known to
# be a tensor, the mean is fixed (unsafe: a float16 sum can overflow where the mean did
# not); where it comes from unknown code (`model(x, y)`) but the result is used as a tensor
# (`loss.backward()`), it is reported without a fix. A selection whose result is never used
# as a tensor, or that is not a boolean mask, is left alone.
import torch.nn.functional as F
import torch


def train(model, loader, opt):
    for batch in loader:
        logits = model(batch["x"])
        per_tok = F.cross_entropy(logits, batch["y"], reduction="none")
        keep = batch["y"] != -100
        loss = torch.where(keep, per_tok, 0).sum() / keep.sum()
        loss.backward()
        opt.step()


def train_unknown(model, loader, opt):
    for x, y in loader:
        per_tok = model(x, y)
        keep = y != -100
        loss = per_tok[keep].mean()
        loss.backward()
        opt.step()


def summarise(model, loader, log):
    for x, y in loader:
        scores = model(x)
        keep = y != -100
        kept = scores[keep].mean()  # never used as a tensor: its kind stays unknown
        first = scores[0].mean()  # not a mask
        log(kept, first)
