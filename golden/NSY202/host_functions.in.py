import torch


def scores(model, batches, dim):
    probs, top, sums = [], [], []
    for batch in batches:
        logits = model(batch)
        probs.append(torch.sigmoid(logits.detach().cpu()).flatten().tolist())  # negative
        top.append(torch.argmax(logits.cpu(), dim=-1).tolist())  # negative
        probs.append(torch.sigmoid(logits).tolist())  # positive: on the device
        sums.append(torch.sum(logits.cpu(), dim).tolist())  # edge: `dim` may be a tensor
    return probs, top, sums
