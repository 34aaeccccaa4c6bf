"""Timing the two versions fairly.

Warm-up calls are not timed (the first compiled call compiles). The timed calls
of the two versions alternate, and which one goes first alternates too, so that
drift (turbo, other processes, caches) is shared instead of landing on one
side. On CUDA each call is timed with CUDA events, with ``synchronize()``
before the start and after the end, so the time covers the device work the call
queued as well as any time the host made the device wait.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Timing:
    """Milliseconds per call over the timed repeats."""

    median_ms: float
    iqr_ms: float
    min_ms: float
    max_ms: float
    repeats: int

    def as_dict(self) -> dict[str, float | int]:
        return {"median_ms": self.median_ms, "iqr_ms": self.iqr_ms, "min_ms": self.min_ms,
                "max_ms": self.max_ms, "repeats": self.repeats}


def summarize(samples: list[float]) -> Timing:
    ordered = sorted(samples)
    if len(ordered) >= 4:
        quartiles = statistics.quantiles(ordered, n=4, method="inclusive")
        iqr = quartiles[2] - quartiles[0]
    else:
        iqr = ordered[-1] - ordered[0]
    return Timing(statistics.median(ordered), iqr, ordered[0], ordered[-1], len(ordered))


def _timer(device: str) -> Callable[[Callable[[], object]], float]:
    if device.startswith("cuda"):
        def time_cuda(call: Callable[[], object]) -> float:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            call()
            end.record()
            torch.cuda.synchronize()
            return float(start.elapsed_time(end))
        return time_cuda

    def time_host(call: Callable[[], object]) -> float:
        started = time.perf_counter()
        call()
        return (time.perf_counter() - started) * 1000.0
    return time_host


def time_pair(before: Callable[[], object], after: Callable[[], object], *, repeats: int,
              warmup: int, device: str) -> tuple[Timing, Timing]:
    """Median and spread of ``repeats`` timed calls of each, after ``warmup`` untimed ones."""
    timer = _timer(device)
    for _ in range(warmup):
        before()
        after()
    samples: dict[str, list[float]] = {"before": [], "after": []}
    calls = {"before": before, "after": after}
    for round_index in range(repeats):
        order = ("before", "after") if round_index % 2 == 0 else ("after", "before")
        for name in order:
            samples[name].append(timer(calls[name]))
    return summarize(samples["before"]), summarize(samples["after"])
