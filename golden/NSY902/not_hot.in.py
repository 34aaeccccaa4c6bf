import torch

lengths = torch.tensor([3, 1, 2])
schedule = torch.zeros(int(lengths.max()))
