import torch


def halves(batches, scale):
    total = 0
    for t in batches:
        t = torch.as_tensor(t, dtype=torch.int64)
        total += t.sum().detach() / 2
    total = total.item() if isinstance(total, torch.Tensor) else total
    return total


def scaled(batches, scale: float):
    total = 0
    for t in batches:
        t = torch.as_tensor(t, dtype=torch.int64)
        total += int(t.sum()) * scale
    return total


def powers(batches):
    total = 0
    for t in batches:
        t = torch.as_tensor(t, dtype=torch.int64)
        total += 2 ** int(t.sum())
    return total


def counts(batches):
    seen = 0
    for t in batches:
        t = torch.as_tensor(t, dtype=torch.int64)
        seen += t.sum().detach() // 2 + len(t)
    seen = int(seen)
    return seen
