# golden: --unsafe-fixes --accumulate-dtype float32
# With float32 sums configured (Apple MPS has no float64) a read of unknown dtype is
# summed in its own dtype, as before: no float64 cast.
import torch


def train(model, loader, criterion):
    total = 0
    for x, y in loader:
        total += criterion(model(x), y).item()
    return total
