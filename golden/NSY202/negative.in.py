import numpy as np
import torch
from torch.utils.data import Dataset


class Tokens(Dataset):
    def __getitem__(self, index):
        parts = []
        for part in self.parts[index]:
            parts.append(torch.as_tensor(part).sum().item())
        return parts


def host_only(loader):
    lengths = []
    scores = []
    for x in loader:
        lengths.append(len(x))
        scores.append(np.float32(x.mean()).item())
    return lengths, scores


def already_tensors(model, loader):
    losses = []
    for x in loader:
        losses.append(model(x).sum().detach())
    return torch.stack(losses).tolist()
