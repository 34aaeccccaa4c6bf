import time

import torch


def benchmark(model, batch, steps):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        model(batch)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    for _ in range(steps):
        start.record()
        model(batch)
        end.record()
        end.synchronize()
    return times
