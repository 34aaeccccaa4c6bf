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


def pad_outputs(outputs: torch.Tensor, results, pad: int):
    # torch.tensor of a tensor keeps that tensor's device; of anything else (numbers, a
    # list, an attribute nothing is known of) it is a CPU tensor.
    rows = outputs[:, 1:]
    padded = torch.full((len(rows), 8), pad)
    for i, seq in enumerate(rows):
        padded[i, : len(seq)] = torch.tensor(seq)  # positive: a copy of a model output
        padded[i, :2] = torch.tensor([pad, len(seq)])  # negative: numbers
        padded[i, 2:4] = torch.LongTensor(results[i].tokens)  # negative: a list in practice
        padded[i, 4:6] = torch.as_tensor(results[i].tokens)  # edge: as_tensor shares a tensor
    return padded


def timestamp_endings(results, begin: int, device, record):
    for result in results:
        tokens = torch.tensor(result.tokens)
        flags: torch.Tensor = tokens.ge(begin)
        record(flags[-2:].tolist() == [False, True])  # negative: annotated, a CPU tensor
        found: torch.Tensor = tokens.to(device).ge(begin)
        record(found[-2:].tolist() == [False, True])  # positive: annotated, on the device


def boxes_of(masks: torch.Tensor):
    # A list of tensors makes a CPU tensor by reading every element: the write waits.
    boxes = torch.zeros(masks.shape[0], 4)
    x_any = torch.any(masks, dim=1)
    for idx in range(masks.shape[0]):
        x = torch.where(x_any[idx, :])[0]
        boxes[idx, :2] = torch.tensor([x[0], x[-1] + 1])  # positive: device scalars
        corners = [x[0], x[-1]]
        boxes[idx, 2:] = torch.tensor(corners)  # positive: the same, through a name
        boxes[idx, 2:] = torch.tensor([float(idx), 2.0])  # negative: numbers
    return boxes
