# Issue 18 forms f and g: a read kept in a local that is then summed or collected in the
# same loop is reported at the read, with what to write; a read that is only printed, or
# summed in another loop, is not this rule's.
import torch


def ratios(model, loader, eps=1e-8):
    total = 0.0
    history = []
    for x, y in loader:
        a = model(x).sum()
        b = y.sum()
        ratio = a.item() / (b.item() + eps)
        total += ratio
        history.append(ratio)
    return total, history


def advantage(policy, value_fn, loader, optimizer):
    adv_sum = 0.0
    for obs, r in loader:
        value = value_fn(obs)
        adv = r - value.item()
        loss = -(policy(obs) * adv).mean()
        loss.backward()
        optimizer.step()
        adv_sum += adv
    return adv_sum


def printed(model, loader):
    for x in loader:
        level = model(x).mean().item()
        print(level)


def elsewhere(model, loader):
    level = 0.0
    for x in loader:
        level = model(x).mean().item()
    total = 0.0
    for _ in range(3):
        total += level
    return total
