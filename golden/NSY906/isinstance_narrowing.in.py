import collections.abc
from collections.abc import Iterable

import torch


def format_value(data):
    # `data.cpu()` below is evidence that `data` may be a tensor, but only in its own
    # branch: an `isinstance` test proves it a mapping or a number in the others.
    if isinstance(data, torch.Tensor):
        return format_value(data.cpu().item())
    if isinstance(data, collections.abc.Mapping):
        parts = []
        for key, value in data.items():
            parts.append(f"{key}: {format_value(value)}")  # negative: a mapping's keys
        return ", ".join(parts)
    if isinstance(data, (int, float)) and data == data:
        for _ in range(2):
            print(f"{data:.4f}")  # negative: a number
    return str(data)


def report(stats):
    if isinstance(stats, torch.Tensor):
        stats = stats.cpu()
    lines = []
    for name, value in stats.items():
        assert isinstance(name, str) and isinstance(value, float)
        lines.append(f"{name}={value:.3f}")  # negative: asserted a string and a number
    return lines


def still_tensors(batches, device):
    log = []
    for x in batches:
        data = torch.ones(2, device=device) * x
        if isinstance(data, float):
            data = torch.ones(2, device=device)
            log.append(f"{data}")  # positive: bound again inside the test's body
        if isinstance(data, Iterable):
            log.append(f"{data}")  # positive: a tensor is iterable
        if not isinstance(data, float):
            log.append(f"{data}")  # positive: the test is negated
        if isinstance(data, float):
            pass
        log.append(f"{data}")  # positive: after the test's body
        assert isinstance(data, float)
        data = torch.ones(2, device=device)
        log.append(f"{data}")  # edge: bound again between the assert and the use
    return log
