"""Autograd graphs kept alive after ``backward()``: an accumulator without ``.detach()``.

``running_loss += loss.item()`` reads a number and lets the step's graph go;
``running_loss += loss`` (or ``history.append(loss)`` followed by a
``torch.stack``) gives the same numbers but builds on the graph: every step's
graph then lives as long as the accumulator does. Values cannot show this, so
the verifier watches the operations themselves (eager runs): once
``Tensor.backward()`` has consumed a graph (without ``retain_graph``), an
operation that takes a tensor of that graph and returns a tensor that requires
grad extends a graph nobody will differentiate again. Each such operation is
counted, by line of the measured file; a rewrite that counts more than the
original keeps graphs alive that the original let go.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch.overrides import TorchFunctionMode

#: Autograd nodes looked at per input when searching for a consumed graph.
_MAX_NODES = 2000


@dataclass
class Retention:
    """Operations that extended a graph after ``backward()`` had consumed it."""

    calls: int = 0
    total: int = 0
    #: line of the measured file (0: elsewhere) -> count
    by_line: Counter[int] = field(default_factory=Counter)

    def add(self, other: Retention) -> None:
        self.calls += other.calls
        self.total += other.total
        self.by_line.update(other.by_line)

    @property
    def per_call(self) -> float:
        return self.total / self.calls if self.calls else 0.0


class _Watch(TorchFunctionMode):
    def __init__(self, filename: str, retention: Retention) -> None:
        super().__init__()
        self.filename = filename
        self.retention = retention
        #: The roots of consumed graphs (held, so that their Python objects stay the same).
        self.roots: list[object] = []
        self.root_ids: set[int] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") == "backward" and args and isinstance(
                args[0], torch.Tensor):
            root = args[0].grad_fn
            retain = kwargs.get("retain_graph")
            if retain is None and len(args) > 2:
                retain = args[2]
            result = func(*args, **kwargs)
            if root is not None and not retain and id(root) not in self.root_ids:
                self.roots.append(root)
                self.root_ids.add(id(root))
            return result
        result = func(*args, **kwargs)
        if self.root_ids and torch.is_grad_enabled() and _requires_grad(result) and any(
                self._consumed(a) for a in _tensors(args, kwargs)):
            self.retention.total += 1
            self.retention.by_line[self._line()] += 1
        return result

    def _consumed(self, tensor: torch.Tensor) -> bool:
        node = tensor.grad_fn
        if node is None:
            return False
        stack, seen = [node], set()
        while stack and len(seen) < _MAX_NODES:
            node = stack.pop()
            if id(node) in self.root_ids:
                return True
            if id(node) in seen:
                continue
            seen.add(id(node))
            for parent, _ in getattr(node, "next_functions", ()):
                if parent is not None:
                    stack.append(parent)
        return False

    def _line(self) -> int:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                return frame.f_lineno
            frame = frame.f_back  # type: ignore[assignment]
        return 0


def _tensors(args: tuple, kwargs: dict) -> Iterator[torch.Tensor]:
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, torch.Tensor))


def _requires_grad(result: object) -> bool:
    if isinstance(result, torch.Tensor):
        return result.requires_grad
    if isinstance(result, (list, tuple)):
        return any(isinstance(r, torch.Tensor) and r.requires_grad for r in result)
    return False


@contextmanager
def watch_retention(filename: str) -> Iterator[Retention]:
    """Count the operations inside the block that extend a graph ``backward()`` consumed."""
    retention = Retention(calls=1)
    with _Watch(filename, retention):
        yield retention
