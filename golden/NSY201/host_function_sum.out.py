# Issue 18 form d: a math function of a read, summed, is reported precisely (torch's
# float64 log10 does not round every last bit as math.log10 does); plain arithmetic on a
# read is fixed.
import math

import torch
import torch.nn.functional as F


def evaluate(model, loader):
    psnr = 0.0
    scaled = 0.0
    for x, y in loader:
        mse = F.mse_loss(model(x), y)
        psnr += 10 * math.log10(1 / mse.item())
        scaled += 10 * (1 / mse.detach().double())
    scaled = float(scaled)
    return psnr / len(loader), scaled
