import sys
import warnings

import torch


class MyWarning(UserWarning):
    pass


class Block(torch.nn.Module):
    def forward(self, x, name):
        print(x)
        print("name", name)
        print(f"shape {x.shape}")
        print("to stderr", file=sys.stderr)
        warnings.warn("custom", MyWarning)
        args = ("a", "b")
        print(*args)
        return x
