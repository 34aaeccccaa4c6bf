"""Peak memory over repeated calls, and what the calls leave allocated.

A rewrite may keep on the device what the original read into Python and dropped:
per-step values stacked for one read at the end, a deferred print buffer, an
accumulator that holds its autograd graph (and with it every step's saved
activations when no ``backward()`` frees them). Each version's entry is called
once to warm up (optimizer state, lazy buffers), then :data:`CALLS` more times
on the same inputs with deferred output flushed only at the end, and the bytes
of tensor memory are followed over those calls:

- on CUDA, ``torch.cuda.max_memory_allocated`` and ``memory_allocated`` (device
  memory, relative to what was allocated before the calls);
- on the CPU, torch's allocator keeps no statistics (``torch.accelerator``'s
  memory functions cover accelerators only) and ``tracemalloc`` sees Python's
  heap, not tensor storage; torch's profiler with ``profile_memory=True`` (its
  legacy form, ``use_kineto=False``: 0.09 s where Kineto's first start took 1.6 s) sees
  every allocation and free of the CPU allocator: an operator's own allocations
  (net of its frees) are placed at its start, frees outside operators at their
  time, and the running sum gives the peak. Measured here on torch 2.13: 12 MB
  for a loop that keeps two 4 MB tensors and makes a third before the old ones
  are released, 24 MB when it keeps every product; exact to the byte.

A rewrite fails when its peak (or what its calls leave allocated) is more than
:data:`FACTOR` times the original's and more than :data:`SLACK` bytes above it.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

#: Calls measured after the warm-up call.
CALLS = 3
#: A rewrite may need up to this many times the original's peak (and kept) memory ...
FACTOR = 1.5
#: ... or up to this many bytes more (small buffers of a few scalars are always allowed).
SLACK = 1 << 20


@dataclass
class MemoryReport:
    """Tensor memory over :data:`CALLS` calls of one version."""

    calls: int = 0
    #: The most bytes allocated at once during the calls, above what was allocated before.
    peak_bytes: int | None = None
    #: Bytes still allocated after the calls (and the final flush), above what was before.
    kept_bytes: int | None = None
    #: What was measured: "CUDA memory" or "CPU tensor memory".
    method: str = ""
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "peak_bytes": self.peak_bytes,
                "kept_bytes": self.kept_bytes, "method": self.method, "error": self.error}


def measure(call: Callable[[], None], finish: Callable[[], None], device: str,
            calls: int = CALLS) -> MemoryReport:
    """Follow tensor memory over ``calls`` calls of ``call``, then ``finish()`` (the
    flush of deferred output). The warm-up call is the caller's."""
    report = MemoryReport()
    if device.startswith("cuda"):
        report.method = "CUDA memory (torch.cuda.max_memory_allocated)"
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        try:
            for _ in range(calls):
                call()
                report.calls += 1
            finish()
        except Exception as error:
            report.error = f"{type(error).__name__}: {_first_line(str(error))}"
            return report
        torch.cuda.synchronize(device)
        report.peak_bytes = max(0, torch.cuda.max_memory_allocated(device) - base)
        report.kept_bytes = torch.cuda.memory_allocated(device) - base
        return report
    report.method = "CPU tensor memory (torch profiler, profile_memory)"
    try:
        with _stderr_closed(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.profiler.profile(profile_memory=True,
                                                 use_kineto=False) as profiler:
                for _ in range(calls):
                    call()
                    report.calls += 1
                finish()
    except Exception as error:
        report.error = f"{type(error).__name__}: {_first_line(str(error))}"
        return report
    report.peak_bytes, report.kept_bytes = _peak(profiler.function_events)
    return report


@contextmanager
def _stderr_closed() -> Iterator[None]:
    """Kineto writes "profiler_start" lines to file descriptor 2 (not sys.stderr) whatever
    its log level: send that descriptor to /dev/null while the profiler runs."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _peak(events: Any) -> tuple[int, int]:
    """The running sum's maximum and its end, over the allocation events of a profile."""
    changes = []
    for event in events:
        if event.name == "[memory]":
            changes.append((event.time_range.start, event.cpu_memory_usage))
        elif event.self_cpu_memory_usage:
            changes.append((event.time_range.start, event.self_cpu_memory_usage))
    current = peak = 0
    for _, change in sorted(changes, key=lambda c: c[0]):
        current += change
        peak = max(peak, current)
    return peak, current


def grows(before: MemoryReport, after: MemoryReport) -> list[str]:
    """What the rewrite needs more of than the rule allows (see the module's text)."""
    found = []
    for what, old, new in (("peak memory", before.peak_bytes, after.peak_bytes),
                           ("memory left allocated after the calls", before.kept_bytes,
                            after.kept_bytes)):
        if old is None or new is None:
            continue
        if new > FACTOR * max(old, 0) and new - old > SLACK:
            found.append(f"the rewritten code needs more memory: {what} over "
                         f"{after.calls} calls {size(old)} -> {size(new)} (more than "
                         f"{FACTOR:g}x and {size(SLACK)} above the original's)")
    return found


def size(value: int | None) -> str:
    """Bytes for a reader: B, KiB, MiB or GiB with three significant digits."""
    if value is None:
        return "-"
    sign = "-" if value < 0 else ""
    number = float(abs(value))
    for unit in ("B", "KiB", "MiB", "GiB"):
        if number < 1024 or unit == "GiB":
            text = f"{number:.0f}" if unit == "B" else f"{number:.3g}"
            return f"{sign}{text} {unit}"
        number /= 1024
    return f"{sign}{number:.3g} GiB"


def _first_line(text: str) -> str:
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else ""
