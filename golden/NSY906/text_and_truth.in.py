# Text made of a tensor without an f-string, and a tensor tested for truth outside a
# condition: each reads the device (`%` and `format` call `float(t)`, `str`/`repr` copy
# the values to print them, `not t` and `t and x` call `bool(t)`).
import torch


def train(model, loader, log, other):
    for x in loader:
        loss = model(x).mean()
        loss.backward()
        # positive
        log("loss %.4f" % loss)
        log("%s at %d" % (loss, len(x)))
        log(str(loss))
        log(repr(loss))
        log(format(loss, ".3f"))
        finite = not torch.isfinite(loss)
        flagged = loss.isnan().any() and other
        # negative: host values, and a tensor that is the value of `or`, not tested
        log("%d in batch" % len(x))
        log(str(loss.shape))
        log(str(loss.dtype))
        log(format(len(x), "d"))
        chosen = other or loss
        log(finite, flagged, chosen)
