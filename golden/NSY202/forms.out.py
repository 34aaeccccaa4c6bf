import numpy as np
import torch
import torch.nn.functional as F


@torch.no_grad()
def predict(model, loader):
    floats = []
    counts = []
    labels = []
    rows = []
    arrays = []
    cpu_tensors = []
    datas = []
    moved = []
    for x, y in loader:
        out = model(x)
        loss = F.cross_entropy(out, y)
        pred = torch.argmax(out, dim=1)
        floats.append(loss.detach())
        counts.append((pred == y).sum().detach())
        labels.append(pred.detach())
        rows.append(pred.detach())
        arrays.append(out.cpu().numpy())
        cpu_tensors.append(out.detach().cpu())
        datas.append(out.data.cpu().numpy())
        moved.append(out.to("cpu").numpy())
    if len({(v.dtype, v.device) for v in floats}) == 1:
        floats = torch.cat([v.reshape(1) for v in floats]).tolist()
    else:
        floats = [float(v) for v in floats]
    if len({(v.dtype, v.device) for v in counts}) == 1:
        counts = torch.cat([v.reshape(1) for v in counts]).tolist()
    else:
        counts = [int(v) for v in counts]
    if (
        len({(v.dtype, v.device, v.shape[1:]) for v in labels}) == 1
        and labels[0].dim() > 0
    ):
        labels = torch.cat(labels).tolist()
    else:
        labels = [x for v in labels for x in v.tolist()]
    if len({(v.dtype, v.device, v.shape) for v in rows}) == 1:
        rows = torch.stack(rows).tolist()
    else:
        rows = [v.tolist() for v in rows]
    return floats, counts, labels, rows, np.concatenate(arrays), cpu_tensors, datas, moved
