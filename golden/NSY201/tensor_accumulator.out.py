# golden: --unsafe-fixes
import torch
import torch.distributed as dist


def train(model, loader, local_rank):
    fsdp_loss = torch.zeros(2).to(local_rank)
    total = torch.zeros((), device=local_rank)
    for batch in loader:
        output = model(**batch)
        loss = output["loss"]
        loss.backward()
        fsdp_loss[0] += loss.detach()
        fsdp_loss[1] += len(batch)
        total += loss.detach()
    dist.all_reduce(fsdp_loss, op=dist.ReduceOp.SUM)
    return fsdp_loss[0] / fsdp_loss[1], total
