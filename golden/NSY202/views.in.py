# golden: --unsafe-fixes
import torch


def track(model, loader, optimizer):
    scales = []
    firsts = []
    norms = []
    for x in loader:
        out = model(x)
        out.sum().backward()
        optimizer.step()
        scales.append(model.logit_scale.item())
        firsts.append(out[0, 0].item())
        norms.append(torch.linalg.vector_norm(out).item())
    return scales, firsts, norms


def changed_later(model, loader):
    values = []
    for x in loader:
        total = model(x).sum()
        values.append(total.item())
        total.mul_(2)
    return values
