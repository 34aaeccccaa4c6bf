# torch computes `c / t` as `t.reciprocal() * c` (two roundings): a host number divided by
# a read is not summed on the device. `1 / t` and `t / u` round as Python does; `t / c`
# does on the CPU, not on CUDA (`t * (1 / c)`): unsafe.
import torch
import torch.nn.functional as F


def rates(model, loader, batch_size):
    inverse = 0.0
    per_item = 0.0
    ratio = 0.0
    throughput = 0.0
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        seconds = x.new_ones(()).sum()
        inverse += 1 / loss.item()
        per_item += loss.item() / len(x)
        ratio += loss.item() / seconds.item()
        throughput += batch_size / seconds.item()
    return inverse, per_item, ratio, throughput
