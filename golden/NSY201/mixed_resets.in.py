import torch


def train(batches, log):
    tokens = 0.0
    for i, mask in enumerate(batches):
        mask = torch.as_tensor(mask, dtype=torch.bool)
        tokens += int(mask.sum())
        if i % 10 == 9:
            log(tokens)
            tokens = 0
    return tokens
