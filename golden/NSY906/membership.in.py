# `x in t` with a tensor `t`: `Tensor.__contains__` computes `(t == x).any()` and reads
# it on the host (a sync, and a graph break under torch.compile).
import torch


def train(model, loader, log, stop_ids):
    eos = torch.tensor([2, 5], device="cuda")
    host_ids = [2, 5]
    for x in loader:
        out = torch.relu(model(x))
        out.sum().backward()
        token = out.argmax()
        # positive
        if token in eos:
            log("stop")
        log(3 not in eos)
        log([k for k in range(4) if k in eos])
        # negative: a list, a value of unknown kind, a dict, a shape, a string, a tensor
        # made on the host
        log(2 in host_ids, 3 in stop_ids, "a" in {"a": 1}, 3 in out.shape, "x" in "xy")
        log(1 in torch.arange(3))
    # edge: outside the loop, not on a hot path
    return 5 in eos
