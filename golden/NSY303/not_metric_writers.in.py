# golden: --unsafe-fixes
import torch
from torch import nn


class Model(nn.Module):
    def log(self, name, value):
        self.history.append((name, value))

    def forward(self, x):
        y = self.layer(x)
        self.log("mean", y.mean().item())
        return y


def train(model, loader, recorder):
    for x in loader:
        loss = model(x).sum()
        recorder.add_scalar("loss", loss.item())
        recorder.set_postfix(loss=loss.item())
