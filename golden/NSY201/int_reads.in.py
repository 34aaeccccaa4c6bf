import torch


def count_tokens(batches):
    tokens = 0
    for mask in batches:
        mask = torch.as_tensor(mask)
        tokens += int(mask.sum())
    return tokens


def truncated(batches):
    whole = 0
    for t in batches:
        t = torch.as_tensor(t, dtype=torch.float32)
        whole -= int(t.mean())
    return whole
