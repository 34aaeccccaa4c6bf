# golden: --unsafe-fixes
# Messages fit the code (issue 20, item 4): an append under `if step % N == 0:` copies
# "whenever it runs (every N steps)", not "every step"; a stop test read only on logging
# steps does not make the collection useless (the other steps no longer wait).
import torch


def train(model, loader, opt, log_every):
    logged = []
    every = []
    for step, x in enumerate(loader):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        every.append(loss.item())
        if step % log_every == 0:
            logged.append(loss.item())
    return logged, every


def generate(step_fn, tok, limit, check_every):
    ids = []
    for i in range(limit):
        tok = step_fn(tok).argmax()
        ids.append(tok.item())
        if i % check_every == 0:
            if tok.item() == 0:
                break
    return ids
