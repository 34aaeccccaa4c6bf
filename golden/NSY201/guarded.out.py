import torch


def mean_norm(vectors):
    total = 0
    for v in vectors:
        norm = torch.linalg.vector_norm(v)
        total += norm.detach().double()
    total = total.item() if isinstance(total, torch.Tensor) else total
    return total
