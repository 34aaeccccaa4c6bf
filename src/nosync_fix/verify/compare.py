"""What one call did, and whether two calls did the same.

An :class:`Observation` flattens everything a caller could see after a call into
``path -> leaf``: the return value (pytrees of tensors, Python scalars, strings,
containers, dataclasses and objects of classes defined in the file), the
arguments afterwards (in-place updates), module state (parameters, gradients,
buffers, train/eval mode), optimizer and scheduler state, the file's globals,
the random number generators, an exception if one was raised, and what was
printed. Two observations are equal when they have the same paths, each leaf has
the same type and equal values: tensors with ``torch.testing.assert_close``
(dtype-aware tolerances, and dtype, shape, device and ``requires_grad`` must
match), Python floats and numbers in printed text with the tolerance of the
rules that made the rewrite (:data:`RULE_TOLERANCES`), everything else exactly.

Tolerances are per rule and tight: a rule that computes the same values with
the same operations (a branch turned into ``torch.where``, a float64
accumulator on the device, a deferred print) promises identical values and
byte-identical text, so nothing is tolerated; only rules whose pages say that
the last bits may change (a cast kept in the tensor's precision, a sum in
another order, host math moved to device float64) allow that much. A rewrite
given with ``--after`` and no ``--rules`` is held to the exact standard.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import random
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import torch

#: float32's defaults in torch.testing.assert_close.
FLOAT_RTOL = 1.3e-6
FLOAT_ATOL = 1e-5


@dataclass(frozen=True)
class Tolerance:
    """How far the rewrite's numbers may move: floats and tensors within ``rtol``/``atol``,
    numbers in printed text too when ``text_numbers`` (otherwise the text is exact)."""

    rtol: float
    atol: float
    text_numbers: bool
    why: str

    @property
    def exact(self) -> bool:
        return self.rtol == 0 and self.atol == 0 and not self.text_numbers


EXACT = Tolerance(0.0, 0.0, False, "same operations on the same values: identical results "
                                   "and byte-identical text")
#: float32 rounding: the rewrite computes in the tensor's float32 where the original used
#: Python's float64, or adds in another order.
FLOAT32 = Tolerance(FLOAT_RTOL, FLOAT_ATOL, True, "float32 rounding (another precision or "
                                                  "order of additions)")
#: float64 on the device where ``math`` computed in float64 on the host: libm and torch's
#: kernels may differ in the last bit or two.
FLOAT64 = Tolerance(1e-15, 1e-300, True, "float64 on the device against Python's math: the "
                                         "last bits may differ")
#: Each rule's promise, as its page states it (docs/rules/<CODE>.md).
RULE_TOLERANCES: dict[str, Tolerance] = {
    "NSY101": EXACT, "NSY102": EXACT, "NSY201": EXACT, "NSY202": EXACT, "NSY203": EXACT,
    "NSY204": EXACT, "NSY301": EXACT, "NSY302": EXACT, "NSY303": EXACT, "NSY401": EXACT,
    "NSY501": FLOAT32, "NSY502": FLOAT64, "NSY503": FLOAT32, "NSY504": EXACT,
}


def tolerance_for(codes: list[str]) -> tuple[Tolerance, list[str]]:
    """The loosest tolerance among the rules ``codes`` (EXACT for none), and the rules that set
    it. An unknown code gets float32's tolerance (a rule added since this table was written)."""
    chosen, by = EXACT, []
    for code in sorted(set(codes)):
        tolerance = RULE_TOLERANCES.get(code, FLOAT32)
        if (tolerance.rtol, tolerance.atol, tolerance.text_numbers) > (
                chosen.rtol, chosen.atol, chosen.text_numbers):
            chosen, by = tolerance, [code]
        elif tolerance == chosen and not chosen.exact:
            by.append(code)
    return chosen, by
_MAX_DEPTH = 12
_SCALARS = (bool, int, float, complex, str, bytes, type(None), torch.dtype, torch.device,
            torch.Size, enum.Enum)


@dataclass(frozen=True)
class Opaque:
    """An object whose contents are not compared, only its type."""

    type_name: str


@dataclass(frozen=True)
class Container:
    """A container's type and its keys or length (its items are separate leaves)."""

    type_name: str
    shape: tuple


@dataclass(frozen=True)
class Alias:
    """The same object seen again, at another path."""

    first_path: str


@dataclass(frozen=True)
class Raised:
    type_name: str
    message: str


@dataclass
class Observation:
    leaves: dict[str, Any] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    warnings: list[str] = field(default_factory=list)


@dataclass
class Difference:
    path: str
    detail: str


@dataclass
class Comparison:
    differences: list[Difference] = field(default_factory=list)
    max_abs_diff: float = 0.0

    def note(self, diff: float) -> None:
        if not math.isnan(diff):
            self.max_abs_diff = max(self.max_abs_diff, diff)


class Observer:
    """Flattens values into ``path -> leaf``; objects of the file's own classes are opened."""

    def __init__(self, module_name: str) -> None:
        self.module_name = module_name
        self.leaves: dict[str, Any] = {}
        self._seen: dict[int, str] = {}
        self._keep: list[Any] = []  # ids stay unique while the observation is made

    def type_name(self, value: Any) -> str:
        cls = type(value)
        if cls.__module__ == self.module_name:
            return cls.__qualname__  # the two versions define their own, equally named classes
        return f"{cls.__module__}.{cls.__qualname__}"

    def add(self, path: str, value: Any, depth: int = 0) -> None:
        if isinstance(value, torch.Tensor):
            self.leaves[path] = _snapshot(value)
            return
        if isinstance(value, _SCALARS):
            self.leaves[path] = value
            return
        if id(value) in self._seen:
            self.leaves[path] = Alias(self._seen[id(value)])
            return
        self._seen[id(value)] = path
        self._keep.append(value)
        if depth >= _MAX_DEPTH:
            self.leaves[path] = Opaque(self.type_name(value))
            return
        if isinstance(value, torch.nn.Module):
            self._module(path, value, depth)
        elif isinstance(value, dict):
            self.leaves[path] = Container(self.type_name(value), tuple(map(repr, value)))
            for key, item in value.items():
                self.add(f"{path}[{key!r}]", item, depth + 1)
        elif isinstance(value, (list, tuple)):
            self.leaves[path] = Container(self.type_name(value), (len(value),))
            for index, item in enumerate(value):
                self.add(f"{path}[{index}]", item, depth + 1)
        elif isinstance(value, (set, frozenset)):
            self.leaves[path] = Container(self.type_name(value), tuple(sorted(map(repr, value))))
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            self.leaves[path] = Container(self.type_name(value), ())
            for f in dataclasses.fields(value):
                self.add(f"{path}.{f.name}", getattr(value, f.name), depth + 1)
        elif callable(getattr(value, "state_dict", None)) and not isinstance(value, type):
            # optimizers, LR schedulers, GradScaler: their state is what a step changes
            self.leaves[path] = Container(self.type_name(value), ())
            try:
                state = value.state_dict()
            except Exception as error:  # a state_dict that fails is itself an observation
                state = Raised(type(error).__name__, str(error))
            self.add(f"{path}.state_dict()", state, depth + 1)
        elif type(value).__module__ == self.module_name and hasattr(value, "__dict__"):
            self.leaves[path] = Container(self.type_name(value), ())
            self._attributes(path, value, depth)
        elif callable(value) or isinstance(value, type):
            return  # functions and classes: code, not state
        else:
            self.leaves[path] = Opaque(self.type_name(value))

    def _module(self, path: str, module: torch.nn.Module, depth: int) -> None:
        self.leaves[path] = Container(self.type_name(module), ())
        for name, sub in module.named_modules():
            self.leaves[f"{path}.{name}.training" if name else f"{path}.training"] = sub.training
            if type(sub).__module__ == self.module_name:
                self._attributes(f"{path}.{name}" if name else path, sub, depth)
        for name, parameter in module.named_parameters():
            self.leaves[f"{path}.{name}"] = _snapshot(parameter)
            grad = parameter.grad
            self.leaves[f"{path}.{name}.grad"] = None if grad is None else _snapshot(grad)
        for name, buffer in module.named_buffers():
            self.leaves[f"{path}.{name}"] = None if buffer is None else _snapshot(buffer)

    def _attributes(self, path: str, value: Any, depth: int) -> None:
        for name, item in vars(value).items():
            if name.startswith("_") or name == "training":
                continue
            if isinstance(item, torch.nn.Module):
                continue  # submodules are observed through named_modules()
            self.add(f"{path}.{name}", item, depth + 1)


def _snapshot(tensor: torch.Tensor) -> torch.Tensor:
    copy = tensor.detach().clone()
    copy._nosync_requires_grad = tensor.requires_grad  # type: ignore[attr-defined]
    copy._nosync_type = type(tensor).__name__  # type: ignore[attr-defined]
    return copy


def rng_state(device: str) -> dict[str, Any]:
    """The random number generators after a call: a shifted stream is a behaviour change."""
    state: dict[str, Any] = {"rng.torch": torch.get_rng_state()}
    if device.startswith("cuda") and torch.cuda.is_available():
        for index, cuda_state in enumerate(torch.cuda.get_rng_state_all()):
            state[f"rng.cuda[{index}]"] = cuda_state
    state["rng.python"] = random.getstate()
    numpy = sys.modules.get("numpy")
    if numpy is not None:  # seeded for both versions (loading.seed_everything): compare it too
        try:
            _name, keys, position, has_gauss, gauss = numpy.random.get_state()
        except Exception:  # an unusual numpy: nothing to compare
            return state
        state["rng.numpy"] = torch.from_numpy(numpy.array(keys, dtype=numpy.int64))
        state["rng.numpy.position"] = (int(position), int(has_gauss), float(gauss))
    return state


# -- comparing ---------------------------------------------------------------------------------


def compare(before: Observation, after: Observation, *, rtol: float | None = None,
            atol: float | None = None, text: Tolerance | None = None) -> Comparison:
    """Every difference between two observations (empty when the calls agree).

    ``rtol``/``atol`` None: torch.testing's dtype defaults for tensors, float32's for
    floats. ``text``: how numbers in printed text may differ (None: float32's tolerance).
    """
    result = Comparison()
    only_before = [p for p in before.leaves if p not in after.leaves]
    only_after = [p for p in after.leaves if p not in before.leaves]
    for path in only_before[:5]:
        result.differences.append(Difference(path, "present before, missing after"))
    for path in only_after[:5]:
        result.differences.append(Difference(path, "missing before, present after"))
    for path, old in before.leaves.items():
        if path in after.leaves:
            detail = _compare_leaf(old, after.leaves[path], result, rtol, atol)
            if detail:
                result.differences.append(Difference(path, detail))
    for stream in ("stdout", "stderr"):
        detail = compare_text(getattr(before, stream), getattr(after, stream), result,
                              tolerance=text)
        if detail:
            result.differences.append(Difference(f"printed ({stream})", detail))
    return result


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"Tensor({value.dtype}, shape {tuple(value.shape)})"
    if isinstance(value, (Container, Opaque)):
        return value.type_name
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) < 60 else text[:57] + '...'}"


def _compare_leaf(old: Any, new: Any, result: Comparison, rtol: float | None,
                  atol: float | None) -> str:
    if type(old) is not type(new) and not (isinstance(old, torch.Tensor)
                                           and isinstance(new, torch.Tensor)):
        return f"{_describe(old)} before, {_describe(new)} after"
    if isinstance(old, torch.Tensor):
        return _compare_tensors(old, new, result, rtol, atol)
    if isinstance(old, float):
        if math.isnan(old) and math.isnan(new):
            return ""
        diff = abs(old - new)
        result.note(diff if not math.isinf(diff) else math.inf)
        if old == new or diff <= (atol if atol is not None else FLOAT_ATOL) + (
                rtol if rtol is not None else FLOAT_RTOL) * abs(old):
            return ""
        return f"{old!r} before, {new!r} after (difference {diff:.3g})"
    if isinstance(old, complex):
        return "" if old == new or abs(old - new) <= FLOAT_ATOL + FLOAT_RTOL * abs(old) \
            else f"{old!r} before, {new!r} after"
    if isinstance(old, Raised):
        if old.type_name != new.type_name:
            return f"raised {old.type_name} before, {new.type_name} after"
        detail = compare_text(old.message, new.message, result)
        return f"different {old.type_name} message: {detail}" if detail else ""
    if old != new:
        return f"{_describe(old)} before, {_describe(new)} after"
    return ""


def _compare_tensors(old: torch.Tensor, new: torch.Tensor, result: Comparison,
                     rtol: float | None, atol: float | None) -> str:
    old_type = getattr(old, "_nosync_type", "Tensor")
    new_type = getattr(new, "_nosync_type", "Tensor")
    if old_type != new_type:
        return f"{old_type} before, {new_type} after"
    old_grad = getattr(old, "_nosync_requires_grad", False)
    new_grad = getattr(new, "_nosync_requires_grad", False)
    if old_grad != new_grad:
        return f"requires_grad={old_grad} before, requires_grad={new_grad} after"
    if old.shape == new.shape and old.dtype == new.dtype and old.device == new.device \
            and old.numel() and (old.is_floating_point() or old.is_complex()):
        both_nan = old.isnan() & new.isnan()
        diff = (old - new).abs().masked_fill(both_nan, 0).max().item()
        result.note(diff)
    try:
        torch.testing.assert_close(new, old, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError as error:
        return _first_lines(str(error), 3)
    except (TypeError, ValueError, RuntimeError) as error:  # e.g. different layouts
        return f"cannot compare: {_first_lines(str(error), 1)}"
    return ""


def _first_lines(text: str, n: int) -> str:
    return " ".join(line.strip() for line in text.strip().splitlines()[:n])


# -- printed text ------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])"
                     r"|(?<![\w.])[-+]?(?:nan|inf)(?![\w.])")


def compare_text(old: str, new: str, result: Comparison | None = None,
                 tolerance: Tolerance | None = None) -> str:
    """"" when two printed texts say the same; otherwise what differs.

    With an exact ``tolerance`` (no ``text_numbers``) the texts must be identical.
    Otherwise numbers may differ within the tolerance (float32's by default), or
    by one unit in their last printed digit (the rounding of two values that agree
    to that tolerance); their form may not change ("1" and "1.0", "0.123" and
    "0.1235" differ). Everything else must be identical.
    """
    tolerance = FLOAT32 if tolerance is None else tolerance
    if old == new:
        return ""
    if not tolerance.text_numbers:
        if sorted(old.splitlines()) == sorted(new.splitlines()):
            return "the same lines in a different order" + _where(old, new)
        return "the text differs (compared exactly)" + _where(old, new)
    old_parts, new_parts = _NUMBER.split(old), _NUMBER.split(new)
    old_numbers, new_numbers = _NUMBER.findall(old), _NUMBER.findall(new)
    if old_parts == new_parts and len(old_numbers) == len(new_numbers):
        bad = [(a, b) for a, b in zip(old_numbers, new_numbers, strict=True)
               if not _same_number(a, b, result, tolerance)]
        if not bad:
            return ""
        a, b = bad[0]
        return f"printed {a} before, {b} after" + _where(old, new)
    if sorted(old.splitlines()) == sorted(new.splitlines()):
        return "the same lines in a different order" + _where(old, new)
    return "the text differs" + _where(old, new)


def _where(old: str, new: str) -> str:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    for index, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)):
        if a != b:
            return f" (line {index + 1}: {a.strip()[:70]!r} vs {b.strip()[:70]!r})"
    if len(old_lines) != len(new_lines):
        return f" ({len(old_lines)} lines before, {len(new_lines)} after)"
    return ""


def _same_number(a: str, b: str, result: Comparison | None, tolerance: Tolerance) -> bool:
    if a == b:
        return True
    if ("." in a) != ("." in b) or ("e" in a.lower()) != ("e" in b.lower()):
        return False
    decimals_a, decimals_b = _decimals(a), _decimals(b)
    if decimals_a != decimals_b and min(decimals_a, decimals_b) < 7:
        return False  # a fixed format such as :.4f changed
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
        return False
    diff = abs(x - y)
    if result is not None:
        result.note(diff)
    # Rounding at the last printed decimal may differ by one unit; integers must be exact.
    fixed_point = decimals_a == decimals_b and decimals_a > 0 and "e" not in a.lower()
    quantum = 10.0 ** -decimals_a if fixed_point else 0.0
    return diff <= max(tolerance.atol + tolerance.rtol * abs(x), quantum * 1.000001)


def _decimals(number: str) -> int:
    mantissa = number.lower().split("e", 1)[0]
    return len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
