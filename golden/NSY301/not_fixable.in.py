import math

import torch
import torch.nn.functional as F


def train(model, loader, log_file):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        print(loss)
        print(f"perplexity {math.exp(loss.item()):.2f}")
        print(f"{loss.item()=}")
        print(f"loss {loss.item():.3f}", file=log_file)
        print(*[p.grad.norm().item() for p in model.parameters()])
