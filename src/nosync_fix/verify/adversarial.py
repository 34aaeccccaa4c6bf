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

Then :func:`search` lets hypothesis look for a difference over combinations
of the same changes, wherever they go: one of the first 8 elements of any
floating tensor set to NaN, ±inf or 0, a tensor zeroed, negated or scaled, a
list cut to 0 to 3 items, a threshold global set to the value it was compared
with or a neighbour; one to three of them at once. The search is
derandomized (the same inputs every run) and a difference it finds is shrunk
(fewer changes, earlier elements, simpler values) before the report prints it.

A kind that changes nothing (no such tensor, no list) is skipped. An
``example_inputs`` that wants other inputs tried can take a keyword
``adversarial``: the verifier then calls it with the kind's name and uses what
it returns, unchanged (``None`` means "no such input": the kind is skipped).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
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


# -- the search --------------------------------------------------------------------------------

#: Inputs the search tries (after the fixed kinds above) unless told otherwise.
SEARCH_EXAMPLES = 25
#: Element values the search writes (simplest first: shrinking moves towards the start).
VALUES = (math.nan, math.inf, -math.inf, 0.0)
#: Whole-tensor changes: zeroed, negated, times 1e4.
SCALES = (0.0, -1.0, _LARGE)


@dataclass(frozen=True)
class Change:
    """One change of an adversarial input found by the search.

    ``what`` is "element" (element ``index`` of floating tensor ``target`` set to
    ``value``), "scale" (tensor ``target`` multiplied by ``value``), "cut" (list argument
    ``target`` cut to ``index`` items) or "global" (module global ``name`` set to
    ``value``, a threshold at or next to the value it was compared with).
    """

    what: str
    target: int = 0
    index: int = 0
    value: float = 0.0
    name: str = ""


def describe(changes: list[Change], tensor_names: list[str], list_names: list[str]) -> str:
    """The changes as a reader wants them: ``args[1][0][0] element 3 = nan; ...``."""
    parts = []
    for change in changes:
        if change.what == "global":
            parts.append(f"{change.name} = {change.value!r}")
        elif change.what == "cut":
            parts.append(f"{_name(list_names, change.target)} cut to {change.index} items")
        elif change.what == "scale":
            parts.append(f"{_name(tensor_names, change.target)} times {change.value:g}")
        else:
            parts.append(f"{_name(tensor_names, change.target)} element {change.index} = "
                         f"{change.value!r}")
    return "; ".join(parts)


def _name(names: list[str], index: int) -> str:
    return names[index % len(names)] if names else f"#{index}"


def targets(args: tuple, kwargs: dict) -> tuple[list[str], list[str]]:
    """Names of the floating tensors and the list arguments the search may change, in the
    order :func:`apply` finds them."""
    tensors: list[tuple[str, torch.Tensor]] = []
    _named_tensors(args, "args", tensors, set(), 0)
    _named_tensors(kwargs, "kwargs", tensors, set(), 0)
    lists = [f"args[{i}]" for i, a in enumerate(args) if isinstance(a, list)]
    lists += [f"kwargs[{k!r}]" for k, v in kwargs.items() if isinstance(v, list)]
    return [name for name, _ in tensors], lists


def apply(args: tuple, kwargs: dict, changes: list[Change]) -> tuple[tuple, dict, dict]:
    """``args`` and ``kwargs`` with ``changes`` made (tensors in place), and the module
    globals to set."""
    tensors: list[tuple[str, torch.Tensor]] = []
    _named_tensors(args, "args", tensors, set(), 0)
    _named_tensors(kwargs, "kwargs", tensors, set(), 0)
    new_globals: dict[str, float] = {}
    for change in changes:
        if change.what == "global":
            new_globals[change.name] = change.value
        elif change.what in ("element", "scale") and tensors:
            tensor = tensors[change.target % len(tensors)][1]
            with torch.no_grad():
                if change.what == "element":
                    flat = tensor.view(-1) if tensor.is_contiguous() else tensor.reshape(-1)
                    flat[change.index % flat.numel()] = change.value
                    if not tensor.is_contiguous():
                        tensor.copy_(flat.view_as(tensor))
                else:
                    tensor.mul_(change.value)
    cuts = [c for c in changes if c.what == "cut"]
    if cuts:
        positions = [("a", i) for i, a in enumerate(args) if isinstance(a, list)]
        positions += [("k", k) for k, v in kwargs.items() if isinstance(v, list)]
        new_args, new_kwargs = list(args), dict(kwargs)
        for change in cuts:
            if not positions:
                break
            where, key = positions[change.target % len(positions)]
            if where == "a":
                new_args[key] = new_args[key][:change.index]
            else:
                new_kwargs[key] = new_kwargs[key][:change.index]
        args, kwargs = tuple(new_args), new_kwargs
    return args, kwargs, new_globals


def strategy(tensors: int, lists: int, ties: dict[str, list[float]]) -> Any:
    """Lists of one to three changes over ``tensors`` floating tensors, ``lists`` list
    arguments and the threshold globals ``ties`` (name -> values to try)."""
    from hypothesis import strategies as st

    kinds = []
    if tensors:
        target = st.integers(0, tensors - 1)
        kinds.append(st.builds(Change, what=st.just("element"), target=target,
                               index=st.integers(0, 7), value=st.sampled_from(VALUES)))
        kinds.append(st.builds(Change, what=st.just("scale"), target=target,
                               value=st.sampled_from(SCALES)))
    if lists:
        kinds.append(st.builds(Change, what=st.just("cut"), target=st.integers(0, lists - 1),
                               index=st.integers(0, 3)))
    for name, values in sorted(ties.items()):
        if values:
            kinds.append(st.builds(Change, what=st.just("global"), name=st.just(name),
                                   value=st.sampled_from(values)))
    if not kinds:
        return None
    return st.lists(st.one_of(kinds), min_size=1, max_size=3)


def search(check: Callable[[list[Change]], str | None], changes: Any, examples: int,
           ) -> tuple[list[Change], str, int] | tuple[None, None, int]:
    """Look for changes on which ``check`` reports a difference; shrink them.

    Returns (the shrunk changes, the difference check reported for them, inputs tried)
    or (None, None, inputs tried). The search is derandomized: the same inputs every run.
    """
    from hypothesis import HealthCheck, Phase, Verbosity, find, settings
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    tried = 0

    def differs(candidate: list[Change]) -> bool:
        nonlocal tried
        tried += 1
        return check(candidate) is not None

    try:
        shrunk = find(changes, differs, settings=settings(
            max_examples=examples, deadline=None, database=None, derandomize=True,
            phases=(Phase.generate, Phase.shrink), verbosity=Verbosity.quiet,
            suppress_health_check=list(HealthCheck)))
    except (NoSuchExample, Unsatisfiable):
        return None, None, tried
    return shrunk, check(shrunk) or "differs (not again: a flaky difference)", tried


def _named_tensors(value: Any, name: str, found: list[tuple[str, torch.Tensor]],
                   seen: set[int], depth: int) -> None:
    """As :func:`_floating_tensors`, with the path of each tensor."""
    if depth > 8 or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, torch.Tensor):
        if (value.is_floating_point() and value.numel() > 0 and not value.requires_grad
                and not isinstance(value, torch.nn.Parameter)):
            found.append((name, value))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _named_tensors(item, f"{name}[{i}]", found, seen, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            _named_tensors(item, f"{name}[{key!r}]", found, seen, depth + 1)
