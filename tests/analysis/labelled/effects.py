import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, y: torch.Tensor, g: torch.Generator):
        a = x * 2 + y  # effects: pure
        b = torch.relu(x) - F.softplus(y)  # effects: pure
        c = x.clamp(min=0).exp()  # effects: pure
        d = torch.rand(3)  # effects: rng
        e = torch.randn_like(x)  # effects: rng
        f = F.dropout(x, 0.1)  # effects: rng
        h = self.drop(x)  # effects: rng, call
        i = torch.zeros(3, generator=g)  # effects: rng
        x.add_(1)  # effects: inplace
        x += 1  # effects: inplace
        self.count = 1  # effects: inplace
        y[0] = 0  # effects: inplace
        j = self.fc(x)  # effects: call
        k = some_function(x)  # effects: call
        print(x)  # effects: io
        logger.info("step")  # effects: io
        m = x.item()  # effects: read
        n = float(y.sum())  # effects: read
        x.uniform_()  # effects: rng, inplace
        o = torch.where(x > 0, x, y)  # effects: pure
        p = max(1, 2)  # effects: pure
        q = F.relu(x, inplace=True)  # effects: inplace
        return a  # effects: control


def some_function(x):
    return x


def loop_effects(items, t: torch.Tensor):
    for item in items:
        if item:
            break  # effects: control
        continue  # effects: control
    if t > 0:  # effects: read
        pass
    lst = []
    lst.append(t)  # effects: inplace
    raise ValueError("x")  # effects: control


def raise_custom(error_type):
    raise error_type("x")  # effects: control, call
