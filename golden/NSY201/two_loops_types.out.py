import torch


def score(floats, counts):
    total = 0
    for t in floats:
        t = torch.as_tensor(t, dtype=torch.float32)
        total += t.mean().detach().double()
    total = total.item() if isinstance(total, torch.Tensor) else total
    for c in counts:
        c = torch.as_tensor(c, dtype=torch.int64)
        total += c.sum().detach()
    total = total.item() if isinstance(total, torch.Tensor) else total
    return total
