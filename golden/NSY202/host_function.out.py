# golden: --unsafe-fixes
# Issue 18 form d: `math` functions of a read, appended, are collected on the device and
# applied after the loop (unsafe: an error they raise comes after the loop).
import math
from math import exp

import torch
import torch.nn.functional as F
from nosync_fix.runtime import to_host


def evaluate(model, loader):
    ppl = []
    psnr = []
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        ppl.append(loss.detach())
        psnr.append(F.mse_loss(model(x), y).detach())
    ppl = [math.exp(x) for x in to_host(ppl, "item")]
    psnr = [10 * math.log10(1 / x) for x in to_host(psnr, "item")]
    return ppl, psnr


def aliased(model, loader):
    ppl = []
    for x, y in loader:
        ppl.append(F.cross_entropy(model(x), y).detach())
    ppl = [exp(x) for x in to_host(ppl, "item")]
    return ppl


def scaled(model, loader, scale):
    # `scale` may change before the loop ends: not this form.
    ppl = []
    for x, y in loader:
        ppl.append(math.exp(F.cross_entropy(model(x), y).item()) * scale)
    return ppl


def mixed(model, loader):
    ppl = []
    for x, y in loader:
        ppl.append(math.exp(F.cross_entropy(model(x), y).item()))
        ppl.append(0.0)
    return ppl
