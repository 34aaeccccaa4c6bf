"""Executed checks behind ``method=executed`` verdicts in precision_verdicts.csv.

Each check runs the before and after form of one rewrite pattern on representative values
(CPU tensors standing in for the device ones) and returns whether they agree exactly.

    python benchmarks/precision_checks.py
"""

from __future__ import annotations

import sys

import torch


def _losses(n: int = 2000, seed: int = 0) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return [torch.rand((), generator=generator) * 3 + 0.1 for _ in range(n)]


def sum_item_vs_double() -> bool:
    """`total += loss.item()` vs `total += loss.detach().double()` then `.item()`."""
    before, after = 0.0, 0
    for loss in _losses():
        before += loss.item()
        after += loss.detach().double()
    return before == after.item()


def sum_item_vs_float32() -> bool:
    """`total += loss.item()` vs `total += loss.detach()` (float32): expected to differ."""
    before, after = 0.0, 0
    for loss in _losses():
        before += loss.item()
        after += loss.detach()
    return before == after.item()


def count_item_vs_int64() -> bool:
    """`correct += pred.eq(t).sum().item()` vs `.sum().detach()` then `int()`."""
    generator = torch.Generator().manual_seed(1)
    before, after = 0, 0
    for _ in range(200):
        pred = torch.randint(0, 10, (64,), generator=generator)
        target = torch.randint(0, 10, (64,), generator=generator)
        before += pred.eq(target).sum().item()
        after += pred.eq(target).sum().detach()
    return before == int(after)


def format_float64_tensor() -> bool:
    """A float64 0-d tensor formats like the Python float with a format spec."""
    values = [t.double() for t in _losses(200)]
    return all(f"{v:.3f}|{v:.6f}|{v:5.2f}" == f"{v.item():.3f}|{v.item():.6f}|{v.item():5.2f}"
               for v in values)


CHECKS = {f.__name__: f for f in (sum_item_vs_double, sum_item_vs_float32,
                                  count_item_vs_int64, format_float64_tensor)}


def main() -> int:
    for name, check in CHECKS.items():
        print(f"{name}: {'same' if check() else 'DIFFERENT'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
