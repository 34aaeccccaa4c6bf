# golden: --all-paths
import torch


def run(x: torch.Tensor, n: int):
    step = 0
    while step < n:
        x = x * 2
        step += 1
    while True:
        x = x / 2
        if x.sum() < 1:
            break
    while x.shape[0] > 1:
        x = x[1:]
    return x
