"""The deferred calls: print, logging and any other call, recorded now and made at flush time."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

import torch

from .._percent import conversions, is_numeric
from . import _buffer, _traced
from ._values import (
    Deferred,
    NotCapturable,
    Text,
    capture,
    host_stand_in,
    is_immutable,
    resolve,
    snapshottable,
)

# -- print -------------------------------------------------------------------------------------


def deferred_print(*objects: Any, sep: str | None = " ", end: str | None = "\n",
                   file: Any = None, flush: bool = False) -> None:
    """``print(*objects, sep=sep, end=end, file=file, flush=flush)``, written at the next flush.

    Objects that may change before the flush are turned into text now
    (``str(obj)``, as ``print`` does); deferred values, templates and
    immutable values (numbers, strings) are turned into text at flush time. The
    stream is the one ``print`` would use now (``sys.stdout`` when ``file`` is
    None); while a redirection or a test's capture stands in for the standard
    stream, the line is written at once. Writing to a file object other than
    ``sys.stdout``/``sys.stderr`` is fine as long as nothing else writes to it
    before :func:`flush`; if it is closed by then, the line is dropped.
    """
    for name, value in (("sep", sep), ("end", end)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be None or a string, not {type(value).__name__}")
    pieces = tuple(o if isinstance(o, (Deferred, Text)) or is_immutable(o) else str(o)
                   for o in objects)
    if torch.compiler.is_compiling():
        # Through an ordered operator that appends the record when the compiled code
        # runs: an append here would make Dynamo guard on the buffer's length.
        if not _traced.record_print((pieces, sep, end, file, flush)):
            _buffer.append_traced((_print, (pieces, sep, end, file, flush)))
        return
    stream = sys.stdout if file is None else file
    if stream is None:
        return  # what print does without a stdout (pythonw)
    stream.write  # noqa: B018  an object without write() fails now, as in print
    # Bound for a stream that stands in for sys.stdout or sys.stderr for a while (a
    # redirection, a test's capture): written now, while that stream is in place.
    standard = stream is sys.stdout or stream is sys.stderr
    _buffer.add((_print, (pieces, sep, end, _buffer.unwrap(stream), flush)),
                now=standard and _buffer.redirected(stream))


def _print(payload: tuple[Any, ...], host: dict[int, torch.Tensor]) -> None:
    pieces, sep, end, file, flush = payload
    if _buffer.closed(file if file is not None else _buffer.unwrap(sys.stdout)):
        return  # nowhere to write: the stream was closed before the flush
    print(*(resolve(p, host) for p in pieces), sep=sep, end=end, file=file, flush=flush)


# -- logging -----------------------------------------------------------------------------------

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR, "exception": logging.ERROR, "critical": logging.CRITICAL}
_MODULE_FUNCTIONS = {getattr(logging, name): name for name in (*_LEVELS, "log")}
#: This module's frames between the caller and the logging call: deferred_log and
#: _make_record (or _log_now). Logging counts them when it looks for the caller.
_OWN_FRAMES = 2


def deferred_log(method: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
    """``method(*args, **kwargs)`` for a logging method, handled at the next flush.

    ``method`` is a level method of a :class:`logging.Logger` (``logger.info``,
    ``logger.log``, ``logger.exception`` ...) or the module function of the
    same name (``logging.info``). The record is made now — its time, thread,
    caller (file, line, function), ``extra`` and exception info are those of
    this call — and handed to the logger's handlers at flush time, with the
    deferred values in its message and arguments computed. The level is
    checked now, as the logger would. A tensor argument that the message
    formats as a number (``"loss %.4f"``) is handed to the handlers as a host
    copy, which logging formats exactly as it would the tensor.

    The call is made at once, with deferred values computed now, when it
    cannot be deferred exactly: another callable (a LoggerAdapter, a Logger
    subclass overriding the method), a message or argument that may change
    before the flush (a list, a tensor formatted by ``%s``), inside
    ``torch.compile``, or on Python < 3.11.
    """
    target = _logging_target(method)
    if target is None or torch.compiler.is_compiling() or sys.version_info < (3, 11):
        return _log_now(method, args, kwargs)
    logger, name, module_function = target
    if module_function and not logging.root.handlers:
        logging.basicConfig()  # what logging.info() and friends do first
    if name == "log":
        if not args:
            return _log_now(method, args, kwargs)  # let logging report the missing level
        level, args = args[0], args[1:]
        if not isinstance(level, int):
            if logging.raiseExceptions:
                raise TypeError("level must be an integer")
            return None
    else:
        level = _LEVELS[name]
        if name == "exception":
            kwargs.setdefault("exc_info", True)
    if not logger.isEnabledFor(level):
        return None
    if not args:
        return _log_now(method, (level,) if name == "log" else (), kwargs)
    msg, *rest = args
    try:
        msg, rest_args = capture(msg), capture(_with_stand_ins(msg, tuple(rest)))
        if kwargs.get("extra") is not None:
            capture(dict(kwargs["extra"]))
    except NotCapturable:
        return _log_now(method, ((level,) if name == "log" else ()) + tuple(args), kwargs)
    record = _make_record(logger, level, msg, rest_args, **kwargs)
    _buffer.add((_emit_log, (logger, record, msg, record.args)))
    return None


def _with_stand_ins(msg: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` with each tensor that ``msg`` formats as a number (``%.4f``, ``%d``)
    replaced by a host stand-in; other tensors are left for :func:`capture` to refuse."""
    if type(msg) is not str or not any(isinstance(a, torch.Tensor) or type(a) is dict
                                       for a in args):
        return args
    found = conversions(msg)
    if found is None:
        return args

    def stand_in(value: Any, key: int | str) -> Any:
        if isinstance(value, torch.Tensor) and is_numeric(found.get(key)) and (
                snapshottable(value)):
            return host_stand_in(value)
        return value

    if len(args) == 1 and type(args[0]) is dict:  # "%(name).4f" with a mapping
        return ({k: stand_in(v, k) for k, v in args[0].items()},)
    return tuple(stand_in(a, i) for i, a in enumerate(args))


def _logging_target(method: Callable[..., Any]) -> tuple[logging.Logger, str, bool] | None:
    """``(logger, method name, is a module function)`` when ``method`` can be deferred."""
    try:
        name = _MODULE_FUNCTIONS.get(method)  # type: ignore[call-overload]
    except TypeError:  # unhashable
        return None
    if name is not None:
        return logging.root, name, True
    owner = getattr(method, "__self__", None)
    function = getattr(method, "__func__", None)
    name = getattr(function, "__name__", "")
    if isinstance(owner, logging.Logger) and name in (*_LEVELS, "log") and (
            function is getattr(logging.Logger, name)):
        return owner, name, False
    return None


def _log_now(method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The logging call itself, now, with deferred values computed."""
    if getattr(getattr(method, "__code__", getattr(getattr(method, "__func__", None),
                                                   "__code__", None)),
               "co_filename", None) == logging._srcfile:
        # The caller logging reports is the first frame outside logging: skip this module's.
        kwargs = {**kwargs, "stacklevel": kwargs.get("stacklevel", 1) + _OWN_FRAMES}
    method(*(resolve(a, {}) for a in args), **kwargs)


_local = _buffer._local


def _make_record(logger: logging.Logger, level: int, msg: Any, args: tuple[Any, ...],
                 exc_info: Any = None, extra: Any = None, stack_info: bool = False,
                 stacklevel: int = 1) -> logging.LogRecord:
    """What ``Logger._log`` does before it hands the record to the handlers."""
    fn, lno, func, sinfo = "(unknown file)", 0, "(unknown function)", None
    if logging._srcfile:
        try:
            fn, lno, func, sinfo = logger.findCaller(stack_info, stacklevel + _OWN_FRAMES)
        except ValueError:
            pass
    if exc_info:
        if isinstance(exc_info, BaseException):
            exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
        elif not isinstance(exc_info, tuple):
            exc_info = sys.exc_info()
    _local.making_record = True  # not a record of ordinary logging: no flush for it
    try:
        return logger.makeRecord(logger.name, level, fn, lno, msg, args, exc_info, func,
                                 extra, sinfo)
    finally:
        _local.making_record = False


def _emit_log(payload: tuple[Any, ...], host: dict[int, torch.Tensor]) -> None:
    logger, record, msg, args = payload
    record.msg = resolve(msg, host)
    record.args = resolve(args, host)
    logger.handle(record)


# -- any call ----------------------------------------------------------------------------------


def deferred_call(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
    """``function(*args, **kwargs)`` at the next flush, with deferred values computed.

    For metric writers (``writer.add_scalar``, ``bar.set_postfix``). Arguments
    are kept as they are now: immutable values as they are, lists, tuples and
    dicts copied. When an argument may change before the flush (a tensor, an
    object), the call is made at once instead. The return value is discarded.
    """
    if torch.compiler.is_compiling():
        # A print through the record operator, as deferred_print; anything else is
        # appended by traced code (Dynamo then guards on that list's length).
        if function is print and set(kwargs) <= _PRINT_OPTIONS and _traced.record_print((
                args, kwargs.get("sep", " "), kwargs.get("end", "\n"), kwargs.get("file"),
                kwargs.get("flush", False))):
            return
        _buffer.append_traced((_call, (function, args, kwargs)))
        return
    try:
        captured = (function, capture(args), capture(kwargs))
    except NotCapturable:
        function(*resolve(args, {}), **resolve(kwargs, {}))
        return
    _buffer.add((_call, captured))


_PRINT_OPTIONS = frozenset({"sep", "end", "file", "flush"})


def _call(payload: tuple[Any, ...], host: dict[int, torch.Tensor]) -> None:
    function, args, kwargs = payload
    function(*resolve(args, host), **resolve(kwargs, host))


__all__ = ["deferred_call", "deferred_log", "deferred_print"]
