"""Deferred values: what a record holds in place of the numbers it will print.

A record must not read the device, so where the original code had
``loss.item()`` it holds ``item(loss)``: a :class:`Deferred` that keeps a
snapshot of ``loss`` on its device and applies ``.item()`` to the host copy
when the record is flushed. Templates (:func:`fmt`, :func:`percent_fmt`) format
everything that is already on the host at once, so that plain values are
captured as they are when the line runs, and keep only the deferred fields.

Every function here has one fallback: when a value cannot be deferred exactly
(a tensor subclass, a numpy scalar, a template this module does not parse),
it is computed at once, exactly as the original code computed it. That costs
the sync the rewrite tried to avoid, never a different output.

The code runs inside ``torch.compile`` without a graph break: no locks, no
clocks, no C helpers Dynamo cannot trace (which is why :func:`fmt` parses its
template itself instead of using ``string.Formatter``).
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

from .._percent import FLOAT_CONVERSIONS, conversions, is_numeric

#: Values of these types cannot change after they are recorded: kept as they are.
_IMMUTABLE = (int, float, complex, bool, str, bytes, type(None))
#: Numbers a deferred value is combined with lazily; anything else is combined at once.
_NUMBERS = (int, float, complex, bool)
#: The conversions `item` accepts besides ``.item()`` itself.
_CONVERSIONS = (float, int, bool, complex)
#: Tensor types whose reads and formatting this module reproduces exactly.
_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)


def is_immutable(value: object) -> bool:
    """Whether ``value`` is of a builtin type that cannot change after it is recorded."""
    return type(value) in _IMMUTABLE


def snapshot(tensor: torch.Tensor) -> torch.Tensor:
    """A detached copy of ``tensor`` on its own device: queued, not waited for."""
    return tensor.detach().clone(memory_format=torch.contiguous_format)


def snapshottable(value: object) -> bool:
    return (type(value) in _PLAIN_TENSORS and value.layout == torch.strided  # type: ignore
            and not value.is_quantized and not value.is_meta)  # type: ignore[attr-defined]


class Deferred:
    """A host value computed when the record holding it is flushed.

    ``item(loss) * 100`` is a Deferred: at flush time the snapshot of ``loss``
    arrives on the host, ``.item()`` turns it into a Python number and ``* 100``
    is applied with Python's own arithmetic, as the original code did.

    Arithmetic (``+ - * / // % **``, unary ``-``/``+``, ``abs``, ``round``)
    with plain numbers or other deferred values stays deferred. An operand of
    any other type (a tensor, a numpy scalar, a user object with its own
    operators) is combined at once, which reads the device now. Anything else
    that needs the value (``str``, ``format``, ``float``, ``bool``, comparisons)
    also gets it at once, so a Deferred that escapes into ordinary code still
    behaves like the number it stands for.
    """

    __slots__ = ("_function", "_operands")

    def __init__(self, function: Callable[..., Any], *operands: object) -> None:
        self._function = function
        self._operands = operands

    def value(self) -> Any:
        """The value now: reads the device if the record has not been flushed."""
        return resolve(self, {})

    def _combine(self, function: Callable[[Any, Any], Any], other: object,
                 reflected: bool) -> Any:
        if isinstance(other, Deferred) or type(other) in _NUMBERS:
            return Deferred(function, other, self) if reflected else Deferred(function, self, other)
        mine = self.value()  # the other operand's own operator decides: compute now
        return function(other, mine) if reflected else function(mine, other)

    def __add__(self, other: object) -> Any:
        return self._combine(operator.add, other, False)

    def __radd__(self, other: object) -> Any:
        return self._combine(operator.add, other, True)

    def __sub__(self, other: object) -> Any:
        return self._combine(operator.sub, other, False)

    def __rsub__(self, other: object) -> Any:
        return self._combine(operator.sub, other, True)

    def __mul__(self, other: object) -> Any:
        return self._combine(operator.mul, other, False)

    def __rmul__(self, other: object) -> Any:
        return self._combine(operator.mul, other, True)

    def __truediv__(self, other: object) -> Any:
        return self._combine(operator.truediv, other, False)

    def __rtruediv__(self, other: object) -> Any:
        return self._combine(operator.truediv, other, True)

    def __floordiv__(self, other: object) -> Any:
        return self._combine(operator.floordiv, other, False)

    def __rfloordiv__(self, other: object) -> Any:
        return self._combine(operator.floordiv, other, True)

    def __mod__(self, other: object) -> Any:
        return self._combine(operator.mod, other, False)

    def __rmod__(self, other: object) -> Any:
        return self._combine(operator.mod, other, True)

    def __pow__(self, other: object, modulo: object = None) -> Any:
        if modulo is not None:
            return pow(self.value(), other, modulo)
        return self._combine(operator.pow, other, False)

    def __rpow__(self, other: object) -> Any:
        return self._combine(operator.pow, other, True)

    def __neg__(self) -> Deferred:
        return Deferred(operator.neg, self)

    def __pos__(self) -> Deferred:
        return Deferred(operator.pos, self)

    def __abs__(self) -> Deferred:
        return Deferred(abs, self)

    def __round__(self, ndigits: object = None) -> Any:
        if ndigits is None:
            return Deferred(round, self)
        if type(ndigits) is int:
            return Deferred(round, self, ndigits)
        return round(self.value(), ndigits)  # type: ignore[call-overload]

    # Everything else needs the value now.
    def __str__(self) -> str:
        return str(self.value())

    def __repr__(self) -> str:
        return repr(self.value())

    def __format__(self, spec: str) -> str:
        return format(self.value(), spec)

    def __bool__(self) -> bool:
        return bool(self.value())

    def __float__(self) -> float:
        return float(self.value())

    def __int__(self) -> int:
        return int(self.value())

    def __complex__(self) -> complex:
        return complex(self.value())

    def __index__(self) -> int:
        return operator.index(self.value())

    def __eq__(self, other: object) -> Any:
        return self.value() == other

    def __ne__(self, other: object) -> Any:
        return self.value() != other

    def __lt__(self, other: object) -> Any:
        return self.value() < other

    def __le__(self, other: object) -> Any:
        return self.value() <= other

    def __gt__(self, other: object) -> Any:
        return self.value() > other

    def __ge__(self, other: object) -> Any:
        return self.value() >= other

    __hash__ = None  # type: ignore[assignment]  # equal to its value, which may change


def item(tensor: Any, convert: Callable[[Any], Any] | None = None) -> Any:
    """``tensor.item()`` at flush time; with ``convert`` (float, int, bool or complex),
    ``convert(tensor)`` at flush time.

    Anything that is not a plain strided tensor holding one element (a numpy
    scalar, a tensor subclass, a tensor of several elements) is read at once,
    with the same result or the same error as the original read.
    """
    if convert is not None and convert not in _CONVERSIONS:
        raise TypeError(f"convert must be one of float, int, bool, complex, not {convert!r}")
    return _item(tensor, convert, caller_depth=2)


def _item(tensor: Any, convert: Callable[[Any], Any] | None, caller_depth: int) -> Any:
    """:func:`item`; ``caller_depth`` frames up is the line that made the read."""
    if not snapshottable(tensor) or tensor.numel() != 1:
        return tensor.item() if convert is None else convert(tensor)
    if convert is not None and tensor.requires_grad and not torch.compiler.is_compiling():
        _warn_as_conversion(convert, tensor.dtype, caller_depth + 1)
    return Deferred(torch.Tensor.item if convert is None else convert, snapshot(tensor))


def _warn_as_conversion(convert: Callable[[Any], Any], dtype: torch.dtype,
                        caller_depth: int) -> None:
    """Give the warning ``convert(tensor)`` gives for a tensor that requires grad, now, at
    the caller's line: torch warns once per process, and the original read would have."""
    with warnings.catch_warnings(record=True) as caught, torch._C.DisableTorchFunction():
        warnings.simplefilter("always")
        convert(torch.zeros((), dtype=dtype, requires_grad=True))  # a CPU tensor of ours
    for warning in caught:
        warnings.warn(warning.message, stacklevel=caller_depth + 1)


def host_stand_in(tensor: torch.Tensor) -> Deferred:
    """At flush time, a host copy of ``tensor`` that formats as the tensor does as a number.

    For ``%``-formatting done by someone else (logging's ``msg % args``), which then
    calls ``float()``/``int()`` on it, with the same result and the same warning for
    a tensor that requires grad.
    """
    return Deferred(_requiring_grad if tensor.requires_grad else _same, snapshot(tensor))


def _requiring_grad(host: torch.Tensor) -> torch.Tensor:
    return host.clone().requires_grad_(True)


def _same(host: torch.Tensor) -> torch.Tensor:
    return host


def tolist(tensor: Any) -> Any:
    """``tensor.tolist()`` at flush time (at once for anything but a plain strided tensor)."""
    if not snapshottable(tensor):
        return tensor.tolist()
    return Deferred(torch.Tensor.tolist, snapshot(tensor))


class Text:
    """A string some of whose fields are filled in at flush time.

    Made by :func:`fmt` and :func:`percent_fmt`. ``str()`` renders it at once.
    """

    __slots__ = ("_parts",)

    def __init__(self, parts: tuple[object, ...]) -> None:
        #: Literal strings, and ``(value, conversion, spec)`` for the deferred fields.
        self._parts = parts

    def render(self, host: dict[int, torch.Tensor]) -> str:
        """The text, with snapshots taken from ``host`` (id of snapshot -> host copy)."""
        out = []
        for part in self._parts:
            if type(part) is str:
                out.append(part)
            else:
                value, conversion, spec = part  # type: ignore[misc]
                out.append(format(_convert(resolve(value, host), conversion), spec))
        return "".join(out)

    def __str__(self) -> str:
        return self.render({})

    def __repr__(self) -> str:
        return repr(str(self))

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def fmt(template: str, /, *args: Any, **kwargs: Any) -> Text | str:
    """``template.format(*args, **kwargs)``, with deferred values formatted at flush time.

    Values that may change before the flush (a list, an object) are formatted
    now, so the text shows them as they are when this line runs. Deferred
    values (``item(t)``, ``item(t) * 100``), immutable values and 0-dim
    tensors formatted as numbers (``{t:.3f}``: ``Tensor.__format__`` reads
    ``t.item()``) are formatted at flush time. A tensor formatted any other
    way (``{t!r}``, or ``{t}`` of a tensor with dimensions) prints
    ``tensor(...)`` with its device and autograd details, which a host copy
    lacks: it is formatted now.

    Templates with attribute or index fields (``{0.x}``, ``{0[1]}``) or nested
    fields in a format spec are formatted entirely now; the result is then a
    plain ``str``.
    """
    pieces = _parse(template) if type(template) is str else None
    if pieces is not None:
        parts = _fields(pieces, args, kwargs)
        if parts is not None:
            return Text(parts)
    return template.format(*(resolve(a, {}) for a in args),
                           **{k: resolve(v, {}) for k, v in kwargs.items()})


def percent_fmt(template: str, args: Any, /) -> Text | str:
    """``template % args``, evaluated at flush time.

    ``args`` is what stood right of ``%``: a tuple, a dict, or a single value.
    A tensor formatted as a number (``%.4f`` calls ``float(t)``, ``%d``
    ``int(t)``) is read at flush time. The text is deferred when every value
    is then deferred or of an immutable builtin type; otherwise (a list, a
    tensor formatted by ``%s``, an object whose ``str`` may change) it is
    formatted now.
    """
    if type(template) is str:
        found = conversions(template)
        # Plain loops, no comprehensions: _as_number counts the frames up to the caller.
        if type(args) is tuple:
            numbers = []
            for index, value in enumerate(args):
                numbers.append(_as_number(value, found, index))
            packed: Any = tuple(numbers)
            values = packed
        elif type(args) is dict:
            packed = {}
            for key, value in args.items():
                packed[key] = _as_number(value, found, key)
            values = tuple(packed.values())
        else:
            packed = _as_number(args, found, 0)
            values = (packed,)
        if all(isinstance(v, (Deferred, Text)) or is_immutable(v) for v in values):
            return Text(((Deferred(operator.mod, template, packed), None, ""),))
    return template % resolve(args, {})


def _as_number(value: Any, found: dict[int | str, str] | None, key: int | str) -> Any:
    """A tensor that ``%`` formats as a number: the deferred ``float(t)`` or ``int(t)``."""
    if found is None or not isinstance(value, torch.Tensor) or not is_numeric(found.get(key)):
        return value
    convert = float if found[key] in FLOAT_CONVERSIONS else int
    return _item(value, convert, caller_depth=3)  # _as_number, percent_fmt, the caller


def resolve(value: Any, host: dict[int, torch.Tensor]) -> Any:
    """The host value of ``value``: deferred values computed, templates rendered.

    A snapshot found in ``host`` is replaced by its host copy; one that is not
    is used as it is (reading the device: this is how :meth:`Deferred.value`
    works before a flush).
    """
    if isinstance(value, Deferred):
        return value._function(*(resolve(o, host) for o in value._operands))
    if isinstance(value, Text):
        return value.render(host)
    if isinstance(value, torch.Tensor):
        return host.get(id(value), value)
    if type(value) is tuple:
        return tuple(resolve(v, host) for v in value)
    if type(value) is list:
        return [resolve(v, host) for v in value]
    if type(value) is dict:
        return {k: resolve(v, host) for k, v in value.items()}
    return value


def snapshots(value: Any) -> Iterator[torch.Tensor]:
    """Every snapshot inside ``value`` (a record's payload, a template, a deferred value)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, Deferred):
        for operand in value._operands:
            yield from snapshots(operand)
    elif isinstance(value, Text):
        for part in value._parts:
            if type(part) is tuple:
                yield from snapshots(part[0])
    elif type(value) in (tuple, list):
        for element in value:
            yield from snapshots(element)
    elif type(value) is dict:
        for element in value.values():
            yield from snapshots(element)


def capture(value: Any) -> Any:
    """``value`` as a record keeps it: deferred values and immutable values as they are,
    containers copied; raises :class:`NotCapturable` for anything that may change."""
    if isinstance(value, (Deferred, Text)) or is_immutable(value):
        return value
    if type(value) in (tuple, list):
        return type(value)(capture(v) for v in value)
    if type(value) is dict:
        return {k: capture(v) for k, v in value.items()}
    raise NotCapturable(value)


class NotCapturable(Exception):
    """A value a record cannot keep unchanged until it is flushed."""


# -- templates ---------------------------------------------------------------------------------


def _convert(value: Any, conversion: str | None) -> Any:
    if conversion is None:
        return value
    return {"s": str, "r": repr, "a": ascii}[conversion](value)


def _parse(template: str) -> list[tuple[str, str | None, str | None, str]] | None:
    """``(literal, field name, conversion, spec)`` for each field of a simple template.

    Simple: field names are empty, a number or an identifier, and specs hold no
    nested fields. Anything else gives None (the caller formats at once, and
    ``str.format`` reports any error itself).
    """
    pieces: list[tuple[str, str | None, str | None, str]] = []
    literal = ""
    i = 0
    while i < len(template):
        opening, closing = template.find("{", i), template.find("}", i)
        brace = min(b for b in (opening, closing, len(template)) if b >= 0)
        literal += template[i:brace]
        if brace == len(template):
            break
        if template[brace:brace + 2] in ("{{", "}}"):
            literal += template[brace]
            i = brace + 2
            continue
        if brace == closing:
            return None
        end = template.find("}", brace + 1)
        field = template[brace + 1:end]
        if end < 0 or "{" in field:
            return None
        head, _, spec = field.partition(":")
        name, bang, conversion = head.partition("!")
        if bang and conversion not in ("r", "s", "a"):
            return None
        if not (name == "" or name.isdigit() or name.isidentifier()):
            return None
        pieces.append((literal, name, conversion or None, spec))
        literal = ""
        i = end + 1
    if literal:
        pieces.append((literal, None, None, ""))
    return pieces


def _fields(pieces: list[tuple[str, str | None, str | None, str]], args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> tuple[object, ...] | None:
    """The parts of a :class:`Text`, or None when ``str.format`` itself must decide."""
    parts: list[object] = []
    automatic = 0
    numbering = set()
    for literal, name, conversion, spec in pieces:
        if literal:
            parts.append(literal)
        if name is None:
            continue
        if name == "":
            numbering.add("automatic")
            index: int | str = automatic
            automatic += 1
        else:
            numbering.add("manual")
            index = int(name) if name.isdigit() else name
        if len(numbering) > 1:
            return None  # str.format raises for mixed numbering
        if isinstance(index, int) and index >= len(args) or isinstance(index, str) and (
                index not in kwargs):
            return None  # str.format raises the right error
        value = args[index] if isinstance(index, int) else kwargs[index]
        parts.append(_field(value, conversion, spec))
    return tuple(parts)


def _field(value: Any, conversion: str | None, spec: str) -> object:
    if isinstance(value, (Deferred, Text)) or is_immutable(value):
        # Immutable values too: formatting them later gives the same text, and under
        # torch.compile an int may be symbolic, which Dynamo cannot format.
        return (value, conversion, spec)
    if conversion is None and type(value) is torch.Tensor and snapshottable(value) and (
            value.dim() == 0):
        # Tensor.__format__ of a 0-dim tensor formats its number: a host copy does the same.
        return (snapshot(value), None, spec)
    return format(_convert(value, conversion), spec)
