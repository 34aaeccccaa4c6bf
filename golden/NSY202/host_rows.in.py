import torch


def trim(input_ids: torch.Tensor, attention_mask: torch.Tensor, prompt_mask: torch.Tensor):
    # trl's trimming for a teacher server: the rows are copied to the host before the
    # loop, so reading them in it waits for nothing (zip's targets, a cast).
    ids_cpu = input_ids.detach().cpu()
    mask_cpu = attention_mask.detach().cpu().bool()
    lengths = prompt_mask.detach().cpu().sum(dim=1).to(torch.long)
    trimmed, sizes = [], []
    for row, mask, length in zip(ids_cpu, mask_cpu, lengths, strict=True):
        sizes.append(int(length.item()))  # negative: cast on the host
        trimmed.append(row[mask].tolist())  # negative: a row of a CPU tensor
    return trimmed, sizes


def rows_of(input_ids: torch.Tensor, attention_mask: torch.Tensor):
    mask_cpu = attention_mask.detach().cpu().bool()
    rows = []
    for device_row, mask in zip(input_ids, mask_cpu):
        rows.append(device_row.tolist())  # positive: a row of the device tensor
    for i, host_mask in enumerate(mask_cpu):
        rows.append(host_mask.tolist())  # negative: enumerate's element of a CPU tensor
    return rows


def moved(lengths: torch.Tensor, input_ids: torch.Tensor):
    host = lengths.cpu()
    sizes = []
    for i in range(3):
        sizes.append(host.to(input_ids)[i].item())  # edge: to(tensor) takes its device
    return sizes
