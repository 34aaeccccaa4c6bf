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
        floats.append(float(loss))
        counts.append(int((pred == y).sum()))
        labels.extend(pred.tolist())
        rows.append(pred.tolist())
        arrays.append(out.cpu().numpy())
        cpu_tensors.append(out.detach().cpu())
        datas.append(out.data.cpu().numpy())
        moved.append(out.to("cpu").numpy())
    return floats, counts, labels, rows, np.concatenate(arrays), cpu_tensors, datas, moved
