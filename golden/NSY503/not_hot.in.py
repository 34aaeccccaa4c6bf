import torch

values = torch.tensor([1.0, -2.0, 3.0])
positive = values[values > 0].sum()
