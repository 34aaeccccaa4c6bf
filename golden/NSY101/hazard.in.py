# golden: --all-paths
import torch
import torch.nn.functional as F


def normalize(logits: torch.Tensor, y: torch.Tensor):
    loss = F.cross_entropy(logits, y)
    for _ in range(2):
        if loss > 1:
            loss = loss / loss.detach()
    return loss
