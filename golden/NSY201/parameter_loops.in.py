# golden: --unsafe-fixes
import torch


def norms(model, optimizer):
    # A model split across devices keeps its parameters on several: summing their norms
    # on one device fails, where Python adds the numbers. The fix is unsafe there.
    total = 0.0
    for p in model.parameters():
        total += p.detach().norm().item() ** 2  # unsafe: parameters
    grads = 0.0
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None:
                grads += p.grad.norm().item() ** 2  # unsafe: a group's parameters
    return total ** 0.5, grads ** 0.5


def clipped(model, limit):
    count = 0
    for p in model.parameters():
        norm = torch.linalg.vector_norm(p.grad)
        if norm > 1.0:  # unsafe anyway; the fix says why twice
            count += 1
    return count


def epoch(model, batches):
    running = 0.0
    for x in batches:
        running += torch.relu(model(x)).sum().item()  # safe: one model's outputs
    return running
