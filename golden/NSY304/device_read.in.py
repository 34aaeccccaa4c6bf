# golden: --select NSY301,NSY304
import torch


@torch.compile(backend="aot_eager")
def step(x):
    loss = (x * 2).sum()
    print(f"loss {loss.item():.4f}")  # NSY301's
    print("step done")
    return loss
