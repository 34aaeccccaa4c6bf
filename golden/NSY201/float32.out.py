# golden: --accumulate-dtype float32 --unsafe-fixes
# On Apple MPS (no float64) floats are summed in float32: an unsafe fix.
import torch


def train(model, loader, criterion):
    total = 0.0
    count = 0
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        total += loss.detach().float()
        count += (torch.argmax(out, 1) == y).sum().detach()
    total = float(total)
    count = int(count)
    return total, count
