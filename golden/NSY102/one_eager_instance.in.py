# golden: --unsafe-fixes
# One instance compiled, another called eagerly in the same file: the forward runs eagerly
# on the second, so no torch.cond fix (the branch is still reported).
import torch
import torch.nn as nn


class Scale(nn.Module):
    def forward(self, y: torch.Tensor):
        score = y.sum()
        if score > 0:
            a = y * 2
            return a
        return y - 1


train_model = torch.compile(Scale())
eval_model = Scale()
print(train_model(torch.randn(4)), eval_model(torch.randn(4)))
