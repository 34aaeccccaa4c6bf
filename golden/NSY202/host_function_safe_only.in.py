# Issue 18 form d: `math` functions of a read, appended, are collected on the device and
# applied after the loop (unsafe: an error they raise comes after the loop).
import math
from math import exp

import torch
import torch.nn.functional as F


def evaluate(model, loader):
    ppl = []
    psnr = []
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        ppl.append(math.exp(loss.item()))
        psnr.append(10 * math.log10(1 / F.mse_loss(model(x), y).item()))
    return ppl, psnr


def aliased(model, loader):
    ppl = []
    for x, y in loader:
        ppl.append(exp(F.cross_entropy(model(x), y).item()))
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
