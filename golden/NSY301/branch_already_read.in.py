# golden: --unsafe-fixes
import torch


def train(model, loader, opt):
    for x in loader:
        loss = model(x).mean()
        if loss.item() > 10:
            print("big loss", loss.item())
        loss.backward()
        opt.step()
