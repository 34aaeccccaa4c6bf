# A recurrence is reported with what to write instead; where the line divides a read by a
# host number, the message says that CUDA's division may differ in the last bit.
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, accumulation_steps, b=0.98):
    ema = 0.0
    halved = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        ema = b * ema + (1 - b) * loss.item() / accumulation_steps
        halved = b * halved + loss.item() / 2
    return ema, halved
