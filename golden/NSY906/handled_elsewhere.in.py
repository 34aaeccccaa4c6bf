import torch


def train(model, optimizer, loader):
    total = 0.0
    losses = []
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()  # NSY201
        losses.append(loss.item())  # NSY202
        print(loss.item())  # NSY301
        if loss.item() > 10:  # NSY103: the test belongs to it
            break
        assert loss.item() > 0  # noqa: NSY401 -- suppressed, still not NSY906's
        scale = 2.0 * loss.item()  # noqa: NSY906
        total = total + scale
    return total, losses


def summary(model, x):
    # Not a hot path: no finding.
    return model(x).sum().item()


class Dataset(torch.utils.data.Dataset):
    def __getitem__(self, index):
        return torch.ones(3)[index].item()
