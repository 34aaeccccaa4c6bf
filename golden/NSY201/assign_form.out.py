import torch


def sum_losses(losses: list[torch.Tensor]) -> float:
    acc = 0.0
    for loss in losses:
        acc = acc + loss.detach().double()
    acc = float(acc)
    return acc


def sum_scaled(batches):
    acc = 0.0
    for t in batches:
        t = torch.as_tensor(t)
        acc = 2 * t.mean().detach().double() + acc
    acc = float(acc)
    return acc
