# Issue 18 form a: sums kept in a dict entry or an attribute are reported with what to
# write instead (no fix: only local variables are moved to the device).
import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    running = {"loss": 0.0, "acc": 0.0}
    for x, y in loader:
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        running["loss"] += loss.item()
        for k, v in {"acc": (out.argmax(1) == y).float().mean()}.items():
            running[k] += v.item()
    return running


class Trainer:
    def epoch(self, model, loader):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            self.total += loss.item()
            self.counts[0] += (model(x).argmax(1) == y).sum().item()
