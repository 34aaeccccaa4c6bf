import torch
import torch.nn.functional as F


def train(model, loader, optimizer, log_every, writer):
    running = 0.0
    best = 1e9
    for step, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        running += loss.detach().double()
        if step % log_every == 0:
            running = running.item() if isinstance(running, torch.Tensor) else running
            writer.add_scalar("loss", running / log_every, step)
            if running < best:
                best = running
            running = 0
    return best
