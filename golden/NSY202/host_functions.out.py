import torch
from nosync_fix.runtime import to_host


def scores(model, batches, dim):
    probs, top, sums = [], [], []
    for batch in batches:
        logits = model(batch)
        probs.append(torch.sigmoid(logits.detach().cpu()).flatten().tolist())  # negative
        top.append(torch.argmax(logits.cpu(), dim=-1).tolist())  # negative
        probs.append(torch.sigmoid(logits).detach())  # positive: on the device
        sums.append(
            torch.sum(logits.cpu(), dim).detach()
        )  # edge: `dim` may be a tensor
    probs = to_host(probs, "tolist")
    sums = to_host(sums, "tolist")
    return probs, top, sums
