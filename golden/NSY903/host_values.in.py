import torch


def butterfly_order(n: int, r: int):
    # Every value written comes from a factory without a device, as the buffer does:
    # a CPU tensor into a CPU tensor, no device to wait for.
    initial = torch.arange(n)
    order = torch.empty(n, dtype=torch.long)
    for i in range(n // r):
        order[i * r : i * r + r] = initial[n - i * r - r : n - i * r]  # negative
    indices = torch.arange(n)
    for i in range(0, n, r):
        block = indices[i : i + r]
        indices[i : i + r] = block[order[:r] % r]  # negative: cut from CPU tensors
    return indices


def collect(batches, device):
    norms = torch.zeros(len(batches))
    counts = torch.zeros(len(batches))
    for k, batch in enumerate(batches):
        scale = torch.ones(1, device=device)
        norms[k] = (scale * 2).norm()  # positive: made on the device
        counts[k] = scale.item()  # positive: read from the device
        counts[k] += torch.ones(1).sum().item()  # edge: a CPU tensor's read waits for nothing
    return norms, counts


def pad_outputs(outputs, pad: int):
    # torch.tensor of a tensor keeps that tensor's device; of numbers it is a CPU tensor.
    rows = [seq[1:] for seq in outputs]
    padded = torch.full((len(rows), 8), pad)
    for i, seq in enumerate(rows):
        padded[i, : len(seq)] = torch.tensor(seq)  # positive: a copy of a model output
        padded[i, :2] = torch.tensor([pad, len(seq)])  # negative: numbers
    return padded
