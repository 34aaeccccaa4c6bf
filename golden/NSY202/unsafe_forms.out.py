# golden: --unsafe-fixes
import torch


def collect(model, loader):
    outputs = []
    labels = []
    for batch in loader:
        out = model(batch["x"])
        outputs.append(out.detach().clone())
        labels.append(batch["y"].detach().clone())
    if (
        len({(v.dtype, v.device, v.shape[1:]) for v in outputs}) == 1
        and outputs[0].dim() > 0
    ):
        outputs = [
            x.clone() for x in torch.cat(outputs).cpu().split([len(v) for v in outputs])
        ]
    else:
        outputs = [v.cpu() for v in outputs]
    if (
        len({(v.dtype, v.device, v.shape[1:]) for v in labels}) == 1
        and labels[0].dim() > 0
    ):
        labels = torch.cat(labels).tolist()
    else:
        labels = [x for v in labels for x in v.tolist()]
    return outputs, labels
