# golden: --unsafe-fixes
# Regression: a file whose only copies to the host are spelled `.to("cpu")` was never
# checked by NSY202 (its triggers listed `.cpu(` but not `.to(`).
import torch


def evaluate(model, loader):
    preds = []
    for x in loader:
        out = model(x)
        preds.append(out.detach().clone())
    if (
        len({(v.dtype, v.device, v.shape[1:]) for v in preds}) == 1
        and preds[0].dim() > 0
    ):
        preds = [
            x.clone() for x in torch.cat(preds).cpu().split([len(v) for v in preds])
        ]
    else:
        preds = [v.cpu() for v in preds]
    return torch.cat(preds)
