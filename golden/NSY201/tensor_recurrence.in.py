import torch


def evaluate(model, batches, device, steps):
    smooth = 0.0
    for step in range(steps):
        scores = torch.zeros(4, device=device)
        count = torch.tensor(0, device=device)
        for x in batches:
            scores += torch.relu(x).sum(0)
            count += x.shape[0]
        # negative: arithmetic on a tensor, not a running Python number (NSY204's read)
        scores = scores / count.item()
        loss = model(batches[0]).mean()
        loss.backward()
        # positive: a Python number updated from its old value and a read
        smooth = 0.9 * smooth + 0.1 * loss.item()
        # edge: the old value's kind is unknown (a model's output): still reported
        outputs = model(batches[1])
        outputs = outputs / count.item()
    return scores, smooth, outputs
