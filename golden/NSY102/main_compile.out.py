# golden: --unsafe-fixes
# A script that makes and compiles its model under `if __name__ == "__main__":` (and in a
# helper that compiles what it makes): every instance is compiled, the forward is traced
# code, and the branch becomes torch.cond.
import torch
import torch.nn as nn


class Scale(nn.Module):
    def forward(self, y: torch.Tensor):
        score = y.sum()
        def _then(y):
            a = y * 2
            return a
        def _else(y):
            return y - 1
        return torch.cond(score > 0, _then, _else, (y,))


class Shift(nn.Module):
    def forward(self, y: torch.Tensor):
        score = y.mean()
        def _then(y):
            return y + 1
        def _else(y):
            return y - 1
        return torch.cond(score > 0, _then, _else, (y,))


def build():
    model = Shift()
    model.compile()
    return model


if __name__ == "__main__":
    model = Scale()
    model = torch.compile(model)
    print(model(torch.randn(4)), build()(torch.randn(4)))
