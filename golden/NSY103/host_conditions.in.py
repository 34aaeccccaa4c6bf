# golden: --all-paths
import torch


def loop(loader, model, optimizer, max_steps: int):
    for step, (x, y) in enumerate(loader):
        if step >= max_steps:
            break
        if x.shape[0] == 0:
            continue
        out = model(x)
        if out is None:
            raise ValueError("no output")
        if not torch.compiler.is_compiling():
            if out.sum() > 0:
                print("positive")
