# A store through a mask is the only read of this file: no other text would have made
# the rule look at it (it once looked only for reads, tests and f-strings).
import torch


def train(model, loader):
    for x in loader:
        out = torch.relu(model(x))
        out[out > 1] = x
        out.sum().backward()
