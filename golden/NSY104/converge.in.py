# golden: --all-paths
import torch


def solve(a: torch.Tensor, b: torch.Tensor, tol: float):
    x = torch.zeros_like(b)
    while (a @ x - b).abs().max() > tol:
        x = x - 0.1 * (a @ x - b)
    return x


def halve(x: torch.Tensor):
    steps = 0
    while x.item() > 1:
        x = x / 2
        steps += 1
    return steps
