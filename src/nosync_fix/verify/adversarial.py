"""Inputs the seeds never produce: NaN, ±inf, zeros, negative and huge values, empty loops.

A rewrite can agree with the original on every seeded input and still be wrong
where the seeds never go: a NaN that ``not (m > limit)`` and ``m <= limit`` treat
differently, an infinite loss that ``isnan`` lets through, ``torch.stack([])`` on
a loop that ran zero times, a probability that underflows to exactly 0 at a
``>=``. After the seeded trials the verifier builds the inputs of the first
seeds again and changes them in each of these ways (:data:`KINDS`), the same way
for both versions, then compares the two calls as it compares any trial:

* ``nan``, ``+inf``, ``-inf``: the first element of every floating-point tensor
  among the arguments (in lists, tuples and dicts, not inside modules) set to it;
* ``large``: those tensors multiplied by 1e4 (softmax saturates at exactly 0 and
  1, norms explode); ``zeros``; ``negative``: their sign flipped;
* ``empty``: every list argument emptied (loops of zero iterations); ``one``:
  every list argument cut to its first element.

A kind that changes nothing (no such tensor, no list) is skipped. An
``example_inputs`` that wants other inputs tried can take a keyword
``adversarial``: the verifier then calls it with the kind's name and uses what
it returns, unchanged (``None`` means "no such input": the kind is skipped).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import torch

KINDS = ("nan", "+inf", "-inf", "large", "zeros", "negative", "empty", "one")
#: How many of the first seeds get each kind.
SEEDS = 2
_LARGE = 1e4


def accepts_hint(inputs: Callable[..., Any]) -> bool:
    """Whether ``example_inputs`` takes the ``adversarial`` keyword (it then builds the
    adversarial inputs itself)."""
    try:
        parameters = inspect.signature(inputs).parameters
    except (TypeError, ValueError):
        return False
    return "adversarial" in parameters


def perturb(args: tuple, kwargs: dict, kind: str) -> tuple[tuple, dict, bool]:
    """``args`` and ``kwargs`` changed in the way ``kind`` says (tensors in place), and
    whether anything changed."""
    if kind in ("empty", "one"):
        changed = False

        def cut(value: Any) -> Any:
            nonlocal changed
            if isinstance(value, list) and (len(value) > 1 or (kind == "empty" and value)):
                changed = True
                return [] if kind == "empty" else value[:1]
            return value

        new_args = tuple(cut(a) for a in args)
        new_kwargs = {k: cut(v) for k, v in kwargs.items()}
        return new_args, new_kwargs, changed
    tensors: list[torch.Tensor] = []
    _floating_tensors((args, kwargs), tensors, set(), 0)
    for tensor in tensors:
        with torch.no_grad():
            if kind in ("nan", "+inf", "-inf"):
                tensor.view(-1)[0] = {"nan": math.nan, "+inf": math.inf, "-inf": -math.inf}[kind]
            elif kind == "large":
                tensor.mul_(_LARGE)
            elif kind == "zeros":
                tensor.zero_()
            elif kind == "negative":
                tensor.neg_()
            else:
                raise ValueError(f"unknown adversarial input {kind!r}")
    return args, kwargs, bool(tensors)


def _floating_tensors(value: Any, found: list[torch.Tensor], seen: set[int], depth: int) -> None:
    if depth > 8 or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, torch.Tensor):
        if (value.is_floating_point() and value.numel() > 0 and not value.requires_grad
                and not isinstance(value, torch.nn.Parameter)):
            found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _floating_tensors(item, found, seen, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _floating_tensors(item, found, seen, depth + 1)
