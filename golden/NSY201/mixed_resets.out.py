import torch


def train(batches, log):
    tokens = 0.0
    for i, mask in enumerate(batches):
        mask = torch.as_tensor(mask, dtype=torch.bool)
        tokens += mask.sum().detach()
        if i % 10 == 9:
            tokens = tokens.item() if isinstance(tokens, torch.Tensor) else tokens
            log(tokens)
            tokens = 0
    tokens = tokens.item() if isinstance(tokens, torch.Tensor) else tokens
    return tokens
