# golden: --unsafe-fixes
import torch
from nosync_fix.runtime import deferred_print, item


def train(model, loader, opt):
    for step, x in enumerate(loader):
        loss = model(x).mean()
        if step % 10 == 0:
            deferred_print("loss", item(loss))
        while loss.sum() > 10:
            print("still big", loss.item())
            loss = loss / 2
        loss.backward()
        opt.step()
