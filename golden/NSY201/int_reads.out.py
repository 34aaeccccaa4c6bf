import torch


def count_tokens(batches):
    tokens = 0
    for mask in batches:
        mask = torch.as_tensor(mask)
        tokens += mask.sum().detach().long()
    tokens = int(tokens)
    return tokens


def truncated(batches):
    whole = 0
    for t in batches:
        t = torch.as_tensor(t, dtype=torch.float32)
        whole -= t.mean().detach().long()
    whole = int(whole)
    return whole
