"""Output made inside code that torch.compile traces, without a graph break or a recompile.

Dynamo cannot trace ``print``, a logging call or ``warnings.warn``: it splits the
graph there. What it can put in a graph is a custom operator, and an operator
registered with an *ordered* effect is kept, in program order, even though its
result is not used. Two such operators live here:

``nosync_fix::call(module, target, payload)``
    calls ``target`` (a dotted name: ``print``, ``logger.warning_once``,
    ``warnings.warn``) resolved in ``module``'s globals or the builtins, with the
    constant arguments encoded in ``payload`` (``repr((args, kwargs))``). Used by
    :func:`call_in_graph`, which nosync-fix writes in place of output calls in
    ``forward`` methods and compiled functions (rule NSY304).
``nosync_fix::record(spec, tensors, ints)``
    appends a deferred ``print`` record to the runtime's buffer when the compiled
    code *runs*. Used by :func:`~nosync_fix.runtime.deferred_print` inside compiled
    code (rule NSY301): appending to the buffer from traced code made Dynamo guard
    on the buffer's length, so every call recompiled.

Both return an empty tensor: an operator returning nothing can be dropped by
Inductor's code generation when it ends a backward graph.

Outside compiled code (and for arguments that are not constants), everything is
the original call, made at once: the only difference is the extra frame of
:func:`call_in_graph`, which is taken out of what the user sees (``stacklevel``
one higher for ``warnings.warn`` and the standard logging methods).
"""

from __future__ import annotations

import ast
import builtins
import logging
import operator
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

import torch

from . import _buffer
from ._values import Deferred, Text, _requiring_grad, _same

#: Types whose values are folded into the graph as constants.
_CONSTANTS = (str, int, float, bool, type(None))
#: The standard logging methods, whose caller is found by walking up the stack.
_LOGGING_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical",
                              "fatal", "exception", "log"})
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


# -- resolving a call --------------------------------------------------------------------------


def _resolve(module: str | dict[str, Any], target: str) -> Callable[..., Any]:
    """``target`` (``"logger.warning_once"``) looked up in ``module``'s globals (or in
    the globals given), or the builtins for a name the module does not define."""
    head, *rest = target.split(".")
    if isinstance(module, dict):
        namespace = module
    else:
        namespace = vars(sys.modules[module]) if module in sys.modules else {}
    if head in namespace:
        value = namespace[head]
    else:
        value = getattr(builtins, head)
    for name in rest:
        value = getattr(value, name)
    return value


def _is_standard_logging(function: Callable[..., Any]) -> bool:
    """A level method of a standard logger or adapter, or a ``logging`` module function:
    these find their caller by walking up the stack, and take ``stacklevel``."""
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    name = getattr(function, "__name__", "")
    return (code is not None and code.co_filename == logging._srcfile
            and name in _LOGGING_METHODS)


def _frames_to_user() -> int:
    """How many frames above the caller of this function belong to torch, to nosync_fix
    or to generated code: under torch.compile the operator runs below the compiled
    code's own machinery."""
    frame = sys._getframe(2)
    count = 0
    while frame is not None and _machinery(frame.f_code.co_filename):
        frame = frame.f_back
        count += 1
    return count


def _machinery(filename: str) -> bool:
    return filename.startswith((_TORCH_DIR, _OWN_DIR)) or not os.path.isfile(filename)


def _call(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
          extra_frames: int) -> None:
    """``function(*args, **kwargs)`` as if made ``extra_frames`` frames above the caller
    of this function (this frame is skipped too)."""
    extra_frames += 1
    if function is warnings.warn:
        bound = _bind_warn(args, kwargs)
        bound["stacklevel"] = bound.get("stacklevel", 1) + extra_frames
        function(**bound)
    elif _is_standard_logging(function):
        function(*args, **{**kwargs, "stacklevel": kwargs.get("stacklevel", 1) + extra_frames})
    else:
        function(*args, **kwargs)


def _bind_warn(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    names = ("message", "category", "stacklevel", "source")
    if len(args) > len(names):
        raise TypeError(f"warn() takes at most {len(names)} positional arguments")
    bound = dict(zip(names, args, strict=False))
    for key, value in kwargs.items():
        if key in bound:
            raise TypeError(f"warn() got multiple values for argument {key!r}")
        bound[key] = value
    return bound


# -- the call operator -------------------------------------------------------------------------


def _call_impl(module: str, target: str, payload: str) -> torch.Tensor:
    args, kwargs = ast.literal_eval(payload)
    args = tuple(_warning_class(a) for a in args)
    kwargs = {k: _warning_class(v) for k, v in kwargs.items()}
    function = _resolve(module, target)
    if function is warnings.warn or _is_standard_logging(function):
        # Their caller, as near as it can be: the first frame of the user's code above
        # the operator's machinery (the compiled frame of the function, not the line).
        _call(function, args, kwargs, _frames_to_user() + 1)
    else:
        function(*args, **kwargs)
    return torch.empty(0)


def _empty(*args: Any) -> torch.Tensor:
    return torch.empty(0)


def _register() -> tuple[Any, Any]:
    try:
        from torch._library.effects import EffectType
    except ImportError:  # an older torch: calls are made directly (and split the graph)
        return None, None
    call_op = torch.library.custom_op("nosync_fix::call", mutates_args=())(_call_impl)
    call_op.register_fake(_empty)
    call_op.register_effect(EffectType.ORDERED)
    record_op = torch.library.custom_op("nosync_fix::record", mutates_args=())(_record_impl)
    record_op.register_fake(_empty)
    record_op.register_effect(EffectType.ORDERED)
    return call_op, record_op


def call_in_graph(module: str, target: str, /, *args: Any, **kwargs: Any) -> None:
    """``target(*args, **kwargs)``, where ``target`` is a dotted name (``"print"``,
    ``"logger.warning_once"``, ``"warnings.warn"``) in the globals of ``module``
    (the caller's ``__name__``) or the builtins.

    Inside torch.compile, when every argument is a ``str``, ``int``, ``float``,
    ``bool`` or ``None`` constant, the call becomes an ordered operator of the
    graph: it is made each time the compiled code runs, in program order, with
    no graph break and no recompile. Otherwise it is made at once, exactly as
    the original call (``warnings.warn`` and the standard logging methods are
    given a ``stacklevel`` one higher, so that they name the same caller).
    """
    if torch.compiler.is_compiling() and _CALL_OP is not None:
        args = tuple(_warning_class_name(a) for a in args)
        kwargs = {k: _warning_class_name(v) for k, v in kwargs.items()}
        if _constants(args, kwargs):
            _CALL_OP(module, target, repr((args, kwargs)))
            return None
    return _call_now(module, target, args, kwargs)


def _call_now(module: str, target: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    # The names of the caller's own globals, as the original call saw them.
    namespace = sys._getframe(2).f_globals
    _call(_resolve(namespace, target), args, kwargs, 2)  # _call_now and call_in_graph
    return None


_CLASS_MARK = "nosync_fix.runtime:builtin warning class "


def _warning_class_name(value: Any) -> Any:
    """A builtin warning class (``UserWarning``) as a marked string, which is a constant."""
    if isinstance(value, type) and issubclass(value, Warning) and (
            getattr(builtins, value.__name__, None) is value):
        return _CLASS_MARK + value.__name__
    return value


def _warning_class(value: Any) -> Any:
    if type(value) is str and value.startswith(_CLASS_MARK):
        return getattr(builtins, value[len(_CLASS_MARK):])
    return value


def _constants(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    for value in args:
        if type(value) not in _CONSTANTS:
            return False
    for value in kwargs.values():
        if type(value) not in _CONSTANTS:
            return False
    return True


# -- deferred prints recorded by compiled code -------------------------------------------------

#: Functions a deferred value may apply, by position (the spec names them by index).
_FUNCTIONS: tuple[Callable[..., Any], ...] = (
    torch.Tensor.item, torch.Tensor.tolist, float, int, bool, complex, round, abs,
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.pow, operator.neg, operator.pos, _requiring_grad, _same,
)


class Unencodable(Exception):
    """A value a record spec cannot describe: the caller records it another way."""


def encode(value: Any, tensors: list[torch.Tensor], ints: list[Any]) -> Any:
    """``value`` (a record's payload) as a nested tuple of constants; its tensors and
    symbolic integers are appended to ``tensors`` and ``ints`` and named by position.

    Written for Dynamo to trace: the result is a constant of the graph.
    """
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return ("t", len(tensors) - 1)
    if type(value) is int or isinstance(value, torch.SymInt):
        # Every int is an operator argument: one that Dynamo made symbolic (a step
        # counter) is then not specialized on by the spec, which would recompile.
        ints.append(value)
        return ("i", len(ints) - 1)
    if value is None or type(value) in (str, float, bool):
        return ("c", value)
    if isinstance(value, Deferred):
        for index, function in enumerate(_FUNCTIONS):
            if value._function is function:
                return ("d", index, tuple(encode(o, tensors, ints) for o in value._operands))
        raise Unencodable(value)
    if isinstance(value, Text):
        parts = []
        for part in value._parts:
            if type(part) is str:
                parts.append(("s", part))
            else:
                parts.append(("f", encode(part[0], tensors, ints), part[1], part[2]))
        return ("x", tuple(parts))
    if type(value) is tuple:
        return ("u", tuple(encode(v, tensors, ints) for v in value))
    if type(value) is list:
        return ("l", tuple(encode(v, tensors, ints) for v in value))
    if type(value) is dict:
        return ("m", tuple((k, encode(v, tensors, ints)) for k, v in value.items()))
    raise Unencodable(value)


def decode(spec: Any, tensors: list[torch.Tensor], ints: list[int]) -> Any:
    """The value :func:`encode` described, with the tensors and integers of this run."""
    kind = spec[0]
    if kind == "t":
        return tensors[spec[1]]
    if kind == "i":
        return ints[spec[1]]
    if kind == "c":
        return spec[1]
    if kind == "d":
        return Deferred(_FUNCTIONS[spec[1]], *(decode(o, tensors, ints) for o in spec[2]))
    if kind == "x":
        return Text(tuple(part[1] if part[0] == "s" else
                          (decode(part[1], tensors, ints), part[2], part[3])
                          for part in spec[1]))
    if kind == "u":
        return tuple(decode(v, tensors, ints) for v in spec[1])
    if kind == "l":
        return [decode(v, tensors, ints) for v in spec[1]]
    if kind == "m":
        return {k: decode(v, tensors, ints) for k, v in spec[1]}
    raise ValueError(f"not a record spec: {spec!r}")


def _record_impl(spec: str, tensors: list[torch.Tensor], ints: list[int]) -> torch.Tensor:
    # The tensors are the graph's: copy them, as a compiled graph may reuse their memory.
    own = [t.detach().clone() for t in tensors]
    kind, payload = ast.literal_eval(spec)
    if kind == "print":
        _buffer.add_compiled((_print, decode(payload, own, ints)))
    return torch.empty(0)


def _print(payload: tuple[Any, ...], host: dict[int, torch.Tensor]) -> None:
    from ._records import _print as emit

    emit(payload, host)


def record_print(payload: tuple[Any, ...]) -> bool:
    """Record a deferred print ``(pieces, sep, end, file, flush)`` from traced code,
    through the record operator; False when the payload cannot be described (the
    caller then records it as before)."""
    if _RECORD_OP is None or payload[3] is not None:
        return False
    tensors: list[torch.Tensor] = []
    ints: list[Any] = []
    try:
        spec = encode(payload, tensors, ints)
    except Unencodable:
        return False
    _RECORD_OP(repr(("print", spec)), tensors, ints)
    return True


_CALL_OP, _RECORD_OP = _register()

__all__ = ["call_in_graph"]
