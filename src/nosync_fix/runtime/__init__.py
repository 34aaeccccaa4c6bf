"""Deferred printing and logging: output that does not make the host wait for the device.

``print(f"step {step} loss {loss.item():.4f}")`` in a training loop makes the
host wait, every step, until the device has finished all queued work; under
``torch.compile`` the read also splits the graph. nosync-fix rewrites it to::

    from nosync_fix.runtime import deferred_print, fmt, item

    deferred_print(fmt("step {} loss {:.4f}", step, item(loss)))

which records the line with a snapshot of ``loss`` taken on the device (a
detached copy: queued, not waited for) and prints exactly the same text later,
when the pending records are flushed with one device-to-host transfer.

The pieces
----------
``item(t)``, ``item(t, float)``, ``tolist(t)``
    ``t.item()``, ``float(t)``, ``t.tolist()`` computed at flush time.
    Arithmetic on them (``item(loss) * 100``, ``round(item(acc), 2)``) is done
    at flush time too, with Python's own operators on the host value.
``fmt(template, *args, **kwargs)``, ``percent_fmt(template, args)``
    ``template.format(...)`` and ``template % args`` with deferred fields.
    Values that may change (a list, an object) are formatted at once, so the
    text shows them as they were. A 0-dim tensor formatted as a number
    (``{t:.3f}``, ``%.3f``) is read at flush time.
``deferred_print(*objects, sep=, end=, file=, flush=)``
    ``print`` at the next flush.
``deferred_log(logger.info, msg, *args, **kwargs)``
    a logging call whose record (time, thread, caller, ``extra``) is made now
    and handled at the next flush. Also ``logging.info`` and the other levels,
    ``.log(level, ...)`` and ``.exception``. A tensor argument formatted as a
    number (``"%.4f"``) is handed to logging as a host copy.
``deferred_call(function, *args, **kwargs)``
    any other call, such as ``writer.add_scalar``, at the next flush.
``flush()``
    emit every pending record now.
``to_host(values, "item")``, ``python_precision(t)``
    not output: what NSY202 and NSY201 fixes call after (and in) a loop whose
    reads they moved to the device (see :mod:`nosync_fix.runtime._collect`).
    They install no hooks.
``call_in_graph(__name__, "logger.warning_once", "message")``
    a call of ``print``, a logger method or ``warnings.warn`` with constant
    arguments, made inside the compiled graph (an ordered operator: no graph
    break) under ``torch.compile``, and at once, unchanged, in eager mode.

Exactness
---------
The output is the text the original code printed, byte for byte: numbers
are formatted from the same Python values, logging records carry the
original time and caller. Wherever that cannot be guaranteed — a tensor
printed as ``tensor(...)`` (its ``device=``/``grad_fn=`` suffixes describe the
device tensor, not a host copy), a value that may change before the flush (a
list), a tensor subclass — the value is computed at once, as the original
did: slower, never different. torch's warning for ``float()`` of a tensor
that requires grad is given where the original gave it.

When records are written
------------------------
In the order they were made, at the first of: ``NOSYNC_FLUSH_EVERY`` pending
records (default 64); a record arriving ``NOSYNC_FLUSH_SECONDS`` (default 1.0)
after the last flush; :func:`flush`; interpreter exit; an uncaught exception
(before its traceback, in the main thread or any other); and before any
output that is not deferred — anything written to ``sys.stdout`` or
``sys.stderr`` and any ordinary logging call — so that nothing overtakes a
pending line. ``NOSYNC_IMMEDIATE=1`` writes every record at once.

A print to ``sys.stdout`` or ``sys.stderr`` while another stream stands in for it
(``contextlib.redirect_stdout``, pytest's ``capsys``: anything but the streams in
place when this module was imported) is written at once, with the records
before it: the caller reads that stream as soon as the redirection ends. A
record whose stream was closed before the flush is dropped (its text has
nowhere to go) instead of failing there or at exit.

Records made inside ``torch.compile`` are appended to the buffer and nothing
else (no lock, no clock: those would break the graph); they are written by the
next of the triggers above met outside the compiled code.

Importing this module wraps ``sys.stdout`` and ``sys.stderr`` (see
:class:`OrderedStream`), chains a log record factory, ``sys.excepthook`` and
``threading.excepthook``, and registers an ``atexit`` flush. Recording is
thread-safe; a process forked while records are pending drops them in the
child (the parent writes them).

Not kept in order: writes that bypass ``sys.stdout``/``sys.stderr`` objects
(``os.write``, ``sys.stdout.buffer``, a stream saved before this import), and
records lost when the process ends without running ``atexit`` (``os._exit``,
a signal). After an asynchronous device error the pending values cannot be
read; the runtime then says on stderr how many records were lost.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._buffer import DEFAULT_FLUSH_EVERY, DEFAULT_FLUSH_SECONDS, OrderedStream, flush
    from ._collect import python_precision, to_host
    from ._records import deferred_call, deferred_log, deferred_print
    from ._traced import call_in_graph
    from ._values import Deferred, Text, fmt, item, percent_fmt, tolist

#: Where each public name lives. They are loaded on first use, so that importing the
#: package alone (as tools that walk nosync_fix do) neither imports torch nor installs
#: the hooks; ``from nosync_fix.runtime import deferred_print`` does both.
_EXPORTS = {
    "DEFAULT_FLUSH_EVERY": "_buffer", "DEFAULT_FLUSH_SECONDS": "_buffer",
    "OrderedStream": "_buffer", "flush": "_buffer", "call_in_graph": "_traced",
    "deferred_call": "_records", "deferred_log": "_records", "deferred_print": "_records",
    "Deferred": "_values", "Text": "_values", "fmt": "_values", "item": "_values",
    "percent_fmt": "_values", "tolist": "_values",
    "python_precision": "_collect", "to_host": "_collect",
}

__all__ = [
    "DEFAULT_FLUSH_EVERY", "DEFAULT_FLUSH_SECONDS", "Deferred", "OrderedStream", "Text",
    "call_in_graph", "configure", "deferred_call", "deferred_log", "deferred_print", "flush",
    "fmt", "item", "pending", "percent_fmt", "python_precision", "to_host", "tolist",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def configure(*, flush_every: int | None = None, flush_seconds: float | None = None,
              immediate: bool | None = None) -> None:
    """Change when records are flushed (the environment variables set the defaults)."""
    from . import _buffer

    if flush_every is not None:
        if flush_every < 1:
            raise ValueError("flush_every must be at least 1")
        _buffer.flush_every = flush_every
    if flush_seconds is not None:
        if flush_seconds < 0:
            raise ValueError("flush_seconds must not be negative")
        _buffer.flush_seconds = flush_seconds
    if immediate is not None:
        _buffer.immediate = immediate


def pending() -> int:
    """How many records wait for a flush."""
    from . import _buffer

    return _buffer.pending_count()
