# golden: --unsafe-fixes
import torch


def train(model, loader, opt):
    for step, x in enumerate(loader):
        loss = model(x).mean()
        if step % 10 == 0:
            print("loss", loss.item())
        while loss.sum() > 10:
            print("still big", loss.item())
            loss = loss / 2
        loss.backward()
        opt.step()
