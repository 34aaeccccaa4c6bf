# golden: --unsafe-fixes
import math

import torch
import torch.nn.functional as F


def evaluate(model, loader, history):
    for inputs, targets in loader:
        loss = F.cross_entropy(model(inputs), targets)
        perplexity = math.exp(loss.item())
        history["ppl"] = perplexity
        try:
            scaled = loss * math.log(loss.item())
        except ValueError:
            scaled = loss
        shifted = F.mse_loss(model(inputs), targets) * math.exp(loss.item())
    return perplexity
