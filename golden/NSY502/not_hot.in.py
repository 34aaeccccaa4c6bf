import math

import torch

reference = torch.tensor(2.0)
weights = torch.ones(3) * math.exp(reference.item())
