# golden: --unsafe-fixes --all-paths
import torch


def validate(x: torch.Tensor):
    # negative inputs are a bug upstream
    if (x < 0).any():
        raise ValueError("x must be non-negative")
    if not torch.isfinite(x).all():
        raise RuntimeError
    return x.sqrt()


def message_built(x: torch.Tensor):
    if (x > 5).any():
        raise ValueError(f"too big: {x.shape}")
    return x


def not_a_guard(x: torch.Tensor):
    if (x < 0).any():
        x = x.abs()
        raise ValueError("negative")
    return x


def with_else(x: torch.Tensor):
    if (x < 0).any():
        raise ValueError("negative")
    else:
        x = x * 2
    return x


def host_check(x: torch.Tensor, n: int):
    if n < 0:
        raise ValueError("n must be non-negative")
    return x
