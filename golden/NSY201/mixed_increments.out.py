import torch


def stats(batches):
    score = 0
    for mask, loss in batches:
        mask = torch.as_tensor(mask, dtype=torch.bool)
        loss = torch.as_tensor(loss, dtype=torch.float32)
        score += int(mask.sum())
        score += loss.mean().item()
    return score


def stats_rebinding(batches):
    score = 0
    for mask, loss in batches:
        mask = torch.as_tensor(mask, dtype=torch.bool)
        loss = torch.as_tensor(loss, dtype=torch.float32)
        score = score + mask.sum().detach()
        score = score + loss.mean().detach().double()
    score = score.item() if isinstance(score, torch.Tensor) else score
    return score
