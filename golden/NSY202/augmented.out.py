import torch


def evaluate(model, loader):
    preds = []
    targets = []
    while True:
        batch = next(loader, None)
        if batch is None:
            break
        x, y = batch
        preds.append(torch.argmax(model(x), 1).detach())
        targets += y.tolist()
    if (
        len({(v.dtype, v.device, v.shape[1:]) for v in preds}) == 1
        and preds[0].dim() > 0
    ):
        preds = torch.cat(preds).tolist()
    else:
        preds = [x for v in preds for x in v.tolist()]
    return preds, targets
