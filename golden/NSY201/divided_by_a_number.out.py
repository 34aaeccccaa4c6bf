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
        by_steps += loss.detach().double() / args.gradient_accumulation_steps
        by_three += loss.detach().double() / 3
        by_four += loss.detach().double() / 4
        by_half += 2 * loss.detach().double() / 0.5
        by_length += loss.detach().double() / len(x)
    by_steps = float(by_steps)
    by_three = float(by_three)
    by_four = float(by_four)
    by_half = float(by_half)
    by_length = float(by_length)
    return by_steps, by_three, by_four, by_half, by_length
