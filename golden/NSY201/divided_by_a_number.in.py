# golden: --unsafe-fixes
# CUDA divides by a Python number as `t * (1 / c)`: two roundings where Python's `x / c`
# has one, so the fix is unsafe; exact when `1 / c` is, for a literal power of two.
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, args):
    by_steps = 0.0
    by_three = 0.0
    by_four = 0.0
    by_half = 0.0
    by_length = 0.0
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        by_steps += loss.item() / args.gradient_accumulation_steps
        by_three += loss.item() / 3
        by_four += loss.item() / 4
        by_half += 2 * loss.item() / 0.5
        by_length += loss.item() / len(x)
    return by_steps, by_three, by_four, by_half, by_length
