# golden: --unsafe-fixes
import torch
from nosync_fix.runtime import to_host


def track(model, loader, optimizer):
    scales = []
    firsts = []
    norms = []
    for x in loader:
        out = model(x)
        out.sum().backward()
        optimizer.step()
        scales.append(model.logit_scale.detach().clone())
        firsts.append(out[0, 0].detach().clone())
        norms.append(torch.linalg.vector_norm(out).detach())
    scales = to_host(scales, "item")
    firsts = to_host(firsts, "item")
    norms = to_host(norms, "item")
    return scales, firsts, norms


def changed_later(model, loader):
    values = []
    for x in loader:
        total = model(x).sum()
        values.append(total.detach().clone())
        total.mul_(2)
    values = to_host(values, "item")
    return values
