# golden: --unsafe-fixes
# A script that makes and compiles its model under `if __name__ == "__main__":` (and in a
# helper that compiles what it makes): every instance is compiled, the forward is traced
# code, and the branch becomes torch.cond.
import torch
import torch.nn as nn


class Scale(nn.Module):
    def forward(self, y: torch.Tensor):
        score = y.sum()
        if score > 0:
            a = y * 2
            return a
        return y - 1


class Shift(nn.Module):
    def forward(self, y: torch.Tensor):
        score = y.mean()
        if score > 0:
            return y + 1
        return y - 1


def build():
    model = Shift()
    model.compile()
    return model


if __name__ == "__main__":
    model = Scale()
    model = torch.compile(model)
    print(model(torch.randn(4)), build()(torch.randn(4)))
