# Regression (issue 20): reads in a periodic block (`if step % 100 == 0:`) are reported
# "whenever it runs (every N steps)", not "every step" (messages: tests/test_messages.py).
import torch


def train(model, loader, optimizer, meter, writer):
    total = 0.0
    for step, (x, y) in enumerate(loader):
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            total += loss.item()
            meter.update(loss.item(), x.size(0))
            host = torch.zeros(1)
            host[0] = loss
            cpu = loss.detach().cpu()
            writer.add_scalar("loss", loss.item(), step)
            print(f"loss {loss.item():.3f}")
            if loss > 10:
                print("big")
    return total
