# golden: --select NSY201,NSY906
import torch


def plot(ax, curves, score, model, loader):
    for i, (x_, y_) in enumerate(curves):
        label = str(i)
        label += f" AUC={score[i].item():0.3f}" if score is not None else ""
        label += " max=%.2f" % x_.max().item()
        ax.plot(x_, y_, label=label)
    total = 0.0
    for x in loader:
        loss = model(x).sum()
        loss.backward()
        total += loss.detach().double()
    total = float(total)
    return total
