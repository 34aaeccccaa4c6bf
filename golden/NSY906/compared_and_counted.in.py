# `max` and `min` of a device tensor test each comparison for truth, `any` and `all` each
# element of one, and `range` of one reads it as an int: each waits for the device.
import torch


def train(model, loader, log, lengths):
    best = float("inf")
    for x in loader:
        loss = model(x).mean()
        loss.backward()
        # positive
        best = min(best, loss)
        worst = max([loss, best])
        count = torch.tensor(len(x), device="cuda")
        for i in range(count):
            log(i)
        finite = all(torch.isfinite(loss.detach().repeat(3)))
        # negative: host values, a CPU tensor, and a key that compares host values
        log(max(len(x), 3))
        log(min(torch.zeros(()), 3))
        log(max(lengths, key=len))
        log(any(lengths), all(len(n) > 0 for n in lengths))
        for i in range(len(x)):
            log(i)
        # edge: not reported, `max` of one iterable (a tensor's elements are compared, but
        # such a value is more often a list the analysis takes for a tensor)
        peak = max(loss.detach().repeat(3))
        log(worst, peak, finite)
    log(best)
