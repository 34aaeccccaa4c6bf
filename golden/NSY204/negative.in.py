import numpy as np
import torch


def host_only(values, arr: np.ndarray):
    total = []
    for v in values:
        t = torch.as_tensor(v)
        total.append(t.mean().item() * 2)
        print(arr.mean().item() * arr)
    return total


def already_detached(batches):
    for x in batches:
        x = torch.as_tensor(x, dtype=torch.float32)
        x = x - x.mean().detach()
    return x
