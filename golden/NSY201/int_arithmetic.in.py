import torch


def halves(batches, scale):
    total = 0
    for t in batches:
        t = torch.as_tensor(t, dtype=torch.int64)
        total += int(t.sum()) / 2
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
        seen += int(t.sum()) // 2 + len(t)
    return seen
