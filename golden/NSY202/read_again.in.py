# golden: --unsafe-fixes
# Regression (the token loops of public generation recipes): the loop's stop test reads
# the same tensor on the host (this pass's value or the next pass's), so every iteration
# waits for it anyway; a device copy per token and one transfer after the loop would save
# nothing. Left as it is, with a finding that says why.
import torch


def decode_greedy(step, first, stop_ids, limit):
    out_ids = []
    tok = first.argmax(-1)
    out_ids.append(tok.item())
    for _ in range(limit):
        if tok.item() in stop_ids:
            break
        tok = step(tok).argmax(-1)
        out_ids.append(tok.item())
    return out_ids


def decode_until(step, tok, eos):
    ids = []
    while tok != eos:
        tok = step(tok)
        ids.append(tok.item())
    return ids


def decode_flags(step, tok, limit):
    ids = []
    for _ in range(limit):
        tok = step(tok)
        ids.append(tok.item())
        if not bool(tok) or limit < 0:
            break
    return ids


# Negative: these tests read nothing of the collected tensor from the device.
def shapes_only(model, loader):
    losses = []
    for x in loader:
        loss = model(x)
        if loss.shape[0] > 1 or loss is None:
            continue
        losses.append(loss.item())
    return losses


def other_tensor(model, loader, limit):
    losses = []
    for x in loader:
        loss = model(x).sum()
        losses.append(loss.item())
        if x.max() > limit:
            break
    return losses
