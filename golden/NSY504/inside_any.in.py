import torch


def already_tracked(model, optimizer):
    tracked = []
    for param in model.parameters():
        if not any(torch.equal(p, param) for group in optimizer.param_groups for p in group["params"]):
            tracked.append(param)
    return tracked
