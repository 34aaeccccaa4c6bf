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
        scales.append(model.logit_scale.detach().clone())
        firsts.append(out[0, 0].detach().clone())
        norms.append(torch.linalg.vector_norm(out).detach())
    if len({(v.dtype, v.device) for v in scales}) == 1:
        scales = torch.cat([v.reshape(1) for v in scales]).tolist()
    else:
        scales = [v.item() for v in scales]
    if len({(v.dtype, v.device) for v in firsts}) == 1:
        firsts = torch.cat([v.reshape(1) for v in firsts]).tolist()
    else:
        firsts = [v.item() for v in firsts]
    if len({(v.dtype, v.device) for v in norms}) == 1:
        norms = torch.cat([v.reshape(1) for v in norms]).tolist()
    else:
        norms = [v.item() for v in norms]
    return scales, firsts, norms


def changed_later(model, loader):
    values = []
    for x in loader:
        total = model(x).sum()
        values.append(total.detach().clone())
        total.mul_(2)
    if len({(v.dtype, v.device) for v in values}) == 1:
        values = torch.cat([v.reshape(1) for v in values]).tolist()
    else:
        values = [v.item() for v in values]
    return values
