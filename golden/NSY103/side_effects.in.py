# golden: --all-paths
import torch


def noisy(x: torch.Tensor, g: torch.Generator):
    if x.sum() > 0:
        x = x + torch.randn(x.shape, generator=g)
    return x


def logs(x: torch.Tensor):
    if x.abs().max() > 100:
        print("large activations")
    return x


def in_place(x: torch.Tensor, buf: torch.Tensor):
    if x.sum() > 0:
        buf.mul_(0.9)
    if x.mean() > 1:
        buf[0] = 1.0
    return buf


class Tracker:
    def update(self, loss: torch.Tensor):
        for _ in range(3):
            if loss > 1:
                self.high = loss
