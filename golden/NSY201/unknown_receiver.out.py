# golden: --unsafe-fixes
import torch


def train(model, loader, optimizer, scheduler):
    total = 0.0
    for batch in loader:
        out = model(**batch)
        out.loss.backward()
        optimizer.step()
        total += out.loss.detach().double()
    total = float(total)
    return {"train_loss": total}
