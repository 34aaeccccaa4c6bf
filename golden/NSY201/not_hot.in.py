import torch
from torch.utils.data import Dataset


class Tokens(Dataset):
    def __init__(self, data):
        self.lengths = 0
        for row in data:
            self.lengths += torch.as_tensor(row).sum().item()

    def __getitem__(self, index):
        total = 0
        for part in self.parts[index]:
            total += torch.as_tensor(part).sum().item()
        return total


total = 0.0
losses = [torch.tensor(1.0)]
final = losses[0].item() + total
