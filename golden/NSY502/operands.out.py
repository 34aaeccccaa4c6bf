# golden: --unsafe-fixes

import numpy as np
import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for inputs, targets in loader:
        out = model(inputs)
        loss = F.mse_loss(out, targets)
        penalty = F.l1_loss(out, targets)
        total = loss + penalty * torch.sqrt(loss.detach().double()).to(penalty)
        damped = (1 - torch.exp(-loss.detach().double())).to(penalty) * penalty
        (total + damped).backward()
        optimizer.step()
