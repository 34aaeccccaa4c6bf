# Regression (Lightning's fabric/utilities/distributed.py): the elements of a tensor
# already copied to the host are read without waiting for any device, so collecting
# them is not reported; the same loop over a device tensor is.
import torch
from nosync_fix.runtime import to_host


def pad_amounts(max_size: torch.Tensor, local_size: torch.Tensor) -> list:
    pad_dims = []
    pad_by = (max_size - local_size).detach().cpu()
    for val in reversed(pad_by):
        pad_dims.append(0)
        pad_dims.append(val.item())
    return pad_dims


def device_amounts(max_size: torch.Tensor, local_size: torch.Tensor) -> list:
    amounts = []
    for val in max_size - local_size:
        amounts.append(val.detach().clone())
    amounts = to_host(amounts, "item")
    return amounts
