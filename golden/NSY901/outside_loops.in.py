# golden: --all-paths
import torch
import torch.distributed as dist


def setup(model):
    model.cuda()
    torch.cuda.synchronize()
    dist.barrier()


torch.cuda.synchronize()
