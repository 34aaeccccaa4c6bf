import torch
import torch.distributed as dist


def train(model, loader, optimizer, log_every: int):
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            torch.cuda.synchronize()
            print("step", step)


def train_distributed(model, loader, optimizer):
    for batch in loader:
        model(batch).sum().backward()
        optimizer.step()
        torch.cuda.synchronize()
        dist.barrier()
