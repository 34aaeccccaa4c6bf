# golden: --unsafe-fixes --all-paths
import torch


def schedule(loss: torch.Tensor, lr: torch.Tensor):
    if loss > 10:
        lr = lr * 0.1
    elif loss > 1:
        lr = lr * 0.5
    else:
        lr = lr * 1.0
    return lr
