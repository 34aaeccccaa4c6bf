# golden: --unsafe-fixes
import math

import numpy as np
import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for inputs, targets in loader:
        out = model(inputs)
        loss = F.mse_loss(out, targets)
        penalty = F.l1_loss(out, targets)
        total = loss + penalty * math.sqrt(loss.item())
        damped = (1 - np.exp(-float(loss))) * penalty
        (total + damped).backward()
        optimizer.step()
