# golden: --unsafe-fixes --all-paths
import torch


def schedule(loss: torch.Tensor, lr: torch.Tensor):
    lr = torch.where(loss > 10, lr * 0.1, torch.where(loss > 1, lr * 0.5, lr * 1.0))
    return lr
