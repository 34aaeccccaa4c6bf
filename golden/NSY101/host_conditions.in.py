# golden: --unsafe-fixes --all-paths
import torch


def host(x: torch.Tensor, cfg, t, step: int):
    if x.shape[0] > 0:
        x = x * 2
    if x.numel():
        x = x + 1
    if t is None:
        t = x
    if len(x) > 3:
        x = x - 1
    if cfg.scale > 1:
        x = x * cfg.scale
    if x.dim() == 2 and x.size(1) > 4:
        x = x[:, :4]
    if step % 10 == 0:
        x = x * 0.5
    return x, t
