# golden: --unsafe-fixes
# Messages fit the code (issue 20, item 4): an append under `if step % N == 0:` copies
# "whenever it runs (every N steps)", not "every step"; a stop test read only on logging
# steps does not make the collection useless (the other steps no longer wait).
import torch
from nosync_fix.runtime import to_host


def train(model, loader, opt, log_every):
    logged = []
    every = []
    for step, x in enumerate(loader):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        every.append(loss.detach())
        if step % log_every == 0:
            logged.append(loss.detach())
    every = to_host(every, "item")
    logged = to_host(logged, "item")
    return logged, every


def generate(step_fn, tok, limit, check_every):
    ids = []
    for i in range(limit):
        tok = step_fn(tok).argmax()
        ids.append(tok.detach().clone())
        if i % check_every == 0:
            if tok.item() == 0:
                break
    ids = to_host(ids, "item")
    return ids
