import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for step, (x, y) in enumerate(loader):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print("step %d loss %.4f" % (step, loss.item()))
        print("loss %.2e" % loss.item())
        print("loss %.3f (step %d)" % (loss, step))
        print("%(loss).2f" % {"loss": loss.item()})
