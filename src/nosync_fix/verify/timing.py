"""Timing the two versions fairly.

Warm-up calls are not timed (the first compiled call compiles). Every timed
call then starts from the same state: the tensors a training step updates in
place (parameters, gradients, buffers, optimizer state, tensor arguments) are
put back as they were after the warm-up, and the random generators are
reseeded, so that a loop that trains, or stops early, does the same work on
every call. The garbage collector runs between calls, not during them (as
``timeit`` does). The timed calls of the two versions alternate, and which one
goes first alternates too, so that drift (turbo, other processes, caches) is
shared instead of landing on one side. A third call, the original again (a
second copy), is timed beside them as a control: how far the original is from
itself is the noise band, printed beside every ratio. On CUDA each call is timed with CUDA
events, with ``synchronize()`` before the start and after the end, so the time
covers the device work the call queued as well as any time the host made the
device wait.
"""

from __future__ import annotations

import copy
import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


class Checkpoint:
    """What a call may change in place under ``roots``, saved now and put back by restore()."""

    def __init__(self, roots: Any) -> None:
        self._tensors: list[tuple[torch.Tensor, torch.Tensor]] = []
        self._grads: list[tuple[torch.Tensor, torch.Tensor | None]] = []
        self._items: list[tuple[dict, Any, Any]] = []
        self._stateful: list[tuple[Any, Any]] = []
        self._seen: set[int] = set()
        self._walk(roots)

    def _tensor(self, tensor: torch.Tensor) -> None:
        if id(tensor) not in self._seen:
            self._seen.add(id(tensor))
            self._tensors.append((tensor, tensor.detach().clone()))

    def _walk(self, value: Any) -> None:
        if isinstance(value, torch.Tensor):
            self._tensor(value)
        elif id(value) in self._seen:
            return
        elif isinstance(value, (list, tuple)):
            self._seen.add(id(value))
            for item in value:
                self._walk(item)
        elif isinstance(value, dict):
            self._seen.add(id(value))
            for item in value.values():
                self._walk(item)
        elif isinstance(value, torch.nn.Module):
            self._seen.add(id(value))
            for parameter in value.parameters():
                self._tensor(parameter)
                grad = parameter.grad
                self._grads.append((parameter, None if grad is None else grad.detach().clone()))
            for buffer in value.buffers():
                self._tensor(buffer)
        elif isinstance(value, torch.optim.Optimizer):
            self._seen.add(id(value))
            for state in value.state.values():
                for key, item in state.items():
                    if isinstance(item, torch.Tensor):
                        self._tensor(item)
                    else:
                        self._items.append((state, key, copy.deepcopy(item)))
            for group in value.param_groups:
                for key, item in group.items():
                    if key != "params" and not isinstance(item, torch.Tensor):
                        self._items.append((group, key, copy.deepcopy(item)))
        elif callable(getattr(value, "state_dict", None)) and callable(
                getattr(value, "load_state_dict", None)):  # LR schedulers, GradScaler
            self._seen.add(id(value))
            self._stateful.append((value, copy.deepcopy(value.state_dict())))

    def restore(self) -> None:
        with torch.no_grad():
            for live, saved in self._tensors:
                if live.shape == saved.shape:
                    live.copy_(saved)
            for parameter, grad in self._grads:
                if grad is None:
                    parameter.grad = None
                elif parameter.grad is None or parameter.grad.shape != grad.shape:
                    parameter.grad = grad.clone()
                else:
                    parameter.grad.copy_(grad)
        for holder, key, item in self._items:
            holder[key] = copy.deepcopy(item)
        for value, state in self._stateful:
            value.load_state_dict(copy.deepcopy(state))


@dataclass
class Timed:
    """A call to time, the objects it updates, and how to reseed before it."""

    call: Callable[[], object]
    roots: Any = None
    reseed: Callable[[], None] | None = None


def time_pair(before: Timed, after: Timed, *, repeats: int, warmup: int,
              device: str) -> tuple[Timing, Timing]:
    """Median and spread of ``repeats`` timed calls of each, after ``warmup`` untimed ones."""
    first, second = time_group([before, after], repeats=repeats, warmup=warmup, device=device)
    return first, second


def noise_band(original: Timing, control: Timing) -> float:
    """The relative difference between the original and itself (a second copy, timed the
    same way, interleaved): ratios closer to 1 than this say nothing."""
    return abs(original.median_ms / control.median_ms - 1.0) if control.median_ms > 0 \
        else float("inf")


def time_group(calls: list[Timed], *, repeats: int, warmup: int, device: str) -> list[Timing]:
    """Like :func:`time_pair` for any number of calls: each round times every call once, in
    an order that rotates from round to round."""
    timer = _timer(device)
    for _ in range(warmup):
        for call in calls:
            call.call()
    names = list(range(len(calls)))
    checkpoints = {name: Checkpoint(calls[name].roots) for name in names}
    samples: dict[int, list[float]] = {name: [] for name in names}
    timed = dict(enumerate(calls))
    gc_was_enabled = gc.isenabled()
    try:
        for round_index in range(repeats):
            shift = round_index % len(names)
            order = names[shift:] + names[:shift]
            if round_index // len(names) % 2:
                order.reverse()
            for name in order:
                checkpoints[name].restore()
                if timed[name].reseed is not None:
                    timed[name].reseed()
                gc.collect()
                gc.disable()
                try:
                    samples[name].append(timer(timed[name].call))
                finally:
                    if gc_was_enabled:
                        gc.enable()
    finally:
        if gc_was_enabled:
            gc.enable()
    return [summarize(samples[name]) for name in names]
