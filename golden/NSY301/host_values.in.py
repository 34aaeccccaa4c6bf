import time

import torch


def train(model, loader, optimizer, epochs):
    start = time.time()
    for epoch in range(epochs):
        for x in loader:
            out = model(x)
            print(x.shape, out.dtype, len(loader))
            print(f"epoch {epoch} took {time.time() - start:.1f}s lr {optimizer.param_groups[0]['lr']}")
            print("step %d of %d" % (epoch, epochs))
    print("done")
