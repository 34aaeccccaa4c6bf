# golden: --unsafe-fixes
# With torch.set_default_device("cuda"), a factory without device= makes a device tensor:
# the branch on it is still reported (without it, `torch.zeros(3)` is a CPU tensor).
import torch

torch.set_default_device("cuda")


def train(model, loader, optimizer):
    for x in loader:
        loss = model(x).sum()
        counts = torch.zeros(3)
        if counts.sum() > 0:
            print("seen")
        loss.backward()
        optimizer.step()
