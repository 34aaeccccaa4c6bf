import torch


def segment_ends(results, record):
    # torch.tensor of a list (an attribute nothing is known of is taken for one) is a CPU
    # tensor: its reads wait for no device.
    for result in results:
        tokens = torch.tensor(result.tokens)
        record(tokens[-1].item())  # negative: a CPU tensor


def average_metrics(stored: dict, logs: dict):
    for key, metrics in stored.items():
        logs[key] = torch.Tensor(metrics).mean().item()  # negative: a legacy constructor
        logs[key + "_max"] = torch.FloatTensor(metrics).max().item()  # negative: the same
    return logs


def first_tokens(outputs: torch.Tensor, lengths: list, record, device):
    for row in outputs:
        record(torch.tensor(row)[0].item())  # positive: a copy of a device tensor
        record(torch.as_tensor(lengths, device=device).sum().item())  # positive: device=
