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
        arrays.append(out.detach().clone())
        cpu_tensors.append(out.detach().clone())
        datas.append(out.detach().clone())
        moved.append(out.detach().clone())
    if len({(v.dtype, v.device) for v in floats}) == 1:
        floats = torch.cat([v.reshape(1) for v in floats]).tolist()
    else:
        floats = [float(v) for v in floats]
    if len({(v.dtype, v.device) for v in counts}) == 1:
        counts = torch.cat([v.reshape(1) for v in counts]).tolist()
    else:
        counts = [int(v) for v in counts]
    if len({(v.dtype, v.device, v.shape[1:]) for v in labels}) == 1 and labels[0].dim() > 0:
        labels = torch.cat(labels).tolist()
    else:
        labels = [x for v in labels for x in v.tolist()]
    if len({(v.dtype, v.device, v.shape) for v in rows}) == 1:
        rows = torch.stack(rows).tolist()
    else:
        rows = [v.tolist() for v in rows]
    if len({(v.dtype, v.device, v.shape[1:]) for v in arrays}) == 1 and arrays[0].dim() > 0:
        arrays = [x.numpy() for x in torch.cat(arrays).cpu().split([len(v) for v in arrays])]
    else:
        arrays = [v.cpu().numpy() for v in arrays]
    if len({(v.dtype, v.device, v.shape[1:]) for v in cpu_tensors}) == 1 and cpu_tensors[0].dim() > 0:
        cpu_tensors = [x.clone() for x in torch.cat(cpu_tensors).cpu().split([len(v) for v in cpu_tensors])]
    else:
        cpu_tensors = [v.cpu() for v in cpu_tensors]
    if len({(v.dtype, v.device, v.shape[1:]) for v in datas}) == 1 and datas[0].dim() > 0:
        datas = [x.numpy() for x in torch.cat(datas).cpu().split([len(v) for v in datas])]
    else:
        datas = [v.cpu().numpy() for v in datas]
    if len({(v.dtype, v.device, v.shape[1:]) for v in moved}) == 1 and moved[0].dim() > 0:
        moved = [x.numpy() for x in torch.cat(moved).cpu().split([len(v) for v in moved])]
    else:
        moved = [v.cpu().numpy() for v in moved]
    return floats, counts, labels, rows, np.concatenate(arrays), cpu_tensors, datas, moved
