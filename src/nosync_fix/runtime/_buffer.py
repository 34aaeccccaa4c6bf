"""The record buffer: pending records, when they are flushed, and how.

A record is ``(emit, payload)``: ``emit(payload, host)`` writes it, with
``host`` mapping each snapshot in the payload (by ``id``) to its host copy.
Records are emitted in the order they were made. A flush copies every
pending snapshot to the host in one transfer per device, then emits.

Ordering against output that is not deferred is kept by three hooks,
installed when this module is imported:

* ``sys.stdout`` and ``sys.stderr`` are wrapped in :class:`OrderedStream`,
  which flushes pending records before anything else is written there;
* a log record factory flushes pending records before any ordinary logging
  call makes its record (its handlers may write to files or to streams
  captured before the wrap);
* ``sys.excepthook`` and ``threading.excepthook`` flush before a traceback
  is printed, and ``atexit`` flushes at interpreter exit.

In a child process made by ``fork`` the parent's pending records are
dropped: the parent emits them.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

from ._values import snapshots

Record = tuple[Callable[[Any, dict[int, torch.Tensor]], None], Any]

DEFAULT_FLUSH_EVERY = 64
DEFAULT_FLUSH_SECONDS = 1.0


def _env_number(name: str, default: float, kind: type) -> Any:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = -1
    if value >= (1 if kind is int else 0):
        return value
    warnings.warn(f"nosync_fix.runtime: ignoring {name}={raw!r}; using {default}",
                  RuntimeWarning, stacklevel=2)
    return default


flush_every: int = _env_number("NOSYNC_FLUSH_EVERY", DEFAULT_FLUSH_EVERY, int)
flush_seconds: float = _env_number("NOSYNC_FLUSH_SECONDS", DEFAULT_FLUSH_SECONDS, float)
immediate: bool = os.environ.get("NOSYNC_IMMEDIATE", "").strip().lower() in ("1", "true", "yes")

_lock = threading.RLock()
_pending: list[Record] = []
_traced_pending: list[Record] = []  # appended by traced code (see append_traced)
_flushing = False  # a flush is emitting (only ever true for the thread holding _lock)
_last_flush = time.monotonic()
_queued_writes = 0  # writes queued behind a flush by OrderedStream
_local = threading.local()  # .making_record: deferred_log is making a record right now


def append_traced(record: Record) -> None:
    """Add a record from code being compiled: a list append is all Dynamo sees.

    It is flushed by the next trigger met outside compiled code, after the records
    that compiled code made through the record operator (``_traced``): Dynamo writes
    the whole list back after the graph, so it must not be the list those go to.
    Dynamo guards on this list's length, so a function that records this way is
    compiled again while records are pending; ``_traced.record_print`` avoids it for
    prints.
    """
    _traced_pending.append(record)


def add_compiled(record: Record) -> None:
    """Add a record made by compiled code as it runs (see ``_traced``): no flush here,
    in the middle of a graph; the next trigger outside compiled code writes it."""
    with _lock:
        _pending.append(record)


def add(record: Record, *, now: bool = False) -> None:
    """Add a record and flush if a flush is due (``now``: flush at once, this record too)."""
    _wrap_standard_streams()
    with _lock:
        _pending.append(record)
        if (now or immediate or _queued_writes or len(_pending) >= flush_every
                or time.monotonic() - _last_flush >= flush_seconds):
            _flush_locked()


def flush() -> None:
    """Emit every pending record now (one device-to-host transfer per device)."""
    with _lock:
        _flush_locked()


class RecordsLost(RuntimeError):
    """The snapshots of pending records could not be copied to the host (a device error)."""


#: How many batches have been fetched: lets a sync counter (nosync-verify) tell the
#: reads of one flush apart from the next, and count each flush as one transfer.
flush_serial = 0


def _flush_locked() -> None:
    global _flushing, _last_flush, _queued_writes, flush_serial
    if _flushing:
        return  # an emitted record wrote to a wrapped stream: let it through
    _flushing = True
    try:
        if _traced_pending:
            _pending.extend(_traced_pending)
            del _traced_pending[:]
        while _pending:
            batch = _pending[:]
            del _pending[:len(batch)]
            _queued_writes = 0
            flush_serial += 1
            try:
                host = _fetch(batch)
            except Exception as error:
                raise RecordsLost(f"{len(batch)} deferred records lost: the device values "
                                  f"could not be copied to the host") from error
            for done, (emit, payload) in enumerate(batch, 1):
                try:
                    emit(payload, host)
                except BaseException:
                    _pending[:0] = batch[done:]  # keep the rest for the next flush
                    raise
    finally:
        _flushing = False
        _last_flush = time.monotonic()


def _fetch(batch: list[Record]) -> dict[int, torch.Tensor]:
    """Host copies of the device snapshots in ``batch``, by ``id`` (CPU ones stay as they are)."""
    by_device: dict[torch.device, dict[int, torch.Tensor]] = {}
    for _, payload in batch:
        for tensor in snapshots(payload):
            if tensor.device.type != "cpu":
                by_device.setdefault(tensor.device, {})[id(tensor)] = tensor
    host: dict[int, torch.Tensor] = {}
    for tensors in by_device.values():
        host.update(copy_to_host(list(tensors.values())))
    return host


def copy_to_host(tensors: list[torch.Tensor]) -> dict[int, torch.Tensor]:
    """Copies of same-device contiguous ``tensors`` on the host, in one transfer.

    The bytes of all of them are concatenated on the device (one small
    kernel), copied at once, and split again on the host: bit for bit the
    same values whatever their dtypes. Larger elements come first, so that
    every tensor starts at an offset its element size divides.
    """
    tensors = sorted(tensors, key=lambda t: -t.element_size())
    flat = torch.cat([t.reshape(-1).view(torch.uint8) for t in tensors]).cpu()
    host = {}
    offset = 0
    for tensor in tensors:
        size = tensor.numel() * tensor.element_size()
        host[id(tensor)] = flat[offset:offset + size].view(tensor.dtype).reshape(tensor.shape)
        offset += size
    return host


def pending_count() -> int:
    """How many records wait for a flush."""
    return len(_pending) + len(_traced_pending)


# -- keeping order with output that is not deferred --------------------------------------------


def _emit_write(payload: tuple[Any, str], host: dict[int, torch.Tensor]) -> None:
    stream, text = payload
    if not closed(stream):
        stream.write(text)


def closed(stream: Any) -> bool:
    """Whether ``stream`` is closed: a record for it is dropped, as its text has nowhere
    to go (a capture that ended, a file closed before the flush)."""
    try:
        return getattr(stream, "closed", False) is True
    except Exception:  # a stream whose `closed` fails is left to fail when written
        return False


#: The standard streams in effect when the runtime was installed (unwrapped), and those
#: of :func:`deferring_to`. A print to ``sys.stdout`` or ``sys.stderr`` while another
#: stream stands in for it — for a while, as with ``contextlib.redirect_stdout`` or
#: pytest's ``capsys`` — is written at once: the caller reads that stream when the
#: redirection ends, before any flush would come.
_lasting_streams: list[Any] = []


def redirected(stream: Any) -> bool:
    """Whether ``stream``, the current ``sys.stdout`` or ``sys.stderr``, stands in for the
    one that was there when the runtime was installed."""
    target = unwrap(stream)
    return not any(target is lasting for lasting in _lasting_streams)


@contextlib.contextmanager
def deferring_to(*streams: Any) -> Iterator[None]:
    """Keep deferring prints to ``streams`` while they stand in for ``sys.stdout`` and
    ``sys.stderr``: for a caller that flushes before it reads them (nosync-verify's
    capture, which counts the syncs of deferred output)."""
    _lasting_streams.extend(streams)
    try:
        yield
    finally:
        for stream in streams:
            for index, lasting in enumerate(_lasting_streams):
                if lasting is stream:
                    del _lasting_streams[index]
                    break


class OrderedStream:
    """A text stream that lets no write overtake a pending record.

    Everything but ``write``, ``writelines`` and ``flush`` is the wrapped
    stream's own. A write made while another thread is flushing is queued
    behind the records being flushed instead of waiting for them, so that a
    thread holding a logging handler's lock never waits for a flush that may
    need that lock.
    """

    def __init__(self, stream: Any) -> None:
        self.wrapped = stream

    def _before_output(self) -> bool:
        """Flush pending records; False when the output must be queued instead."""
        if not _pending and not _traced_pending and not _flushing:
            return True
        if not _lock.acquire(blocking=False):
            return False
        try:
            _flush_locked()
        finally:
            _lock.release()
        return True

    def write(self, text: str) -> int:
        global _queued_writes
        if self._before_output():
            return self.wrapped.write(text)
        _pending.append((_emit_write, (self.wrapped, text)))
        _queued_writes += 1
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._before_output()
        self.wrapped.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def unwrap(stream: Any) -> Any:
    """The stream an :class:`OrderedStream` wraps (records write there directly)."""
    return stream.wrapped if isinstance(stream, OrderedStream) else stream


def _wrap_standard_streams() -> None:
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, OrderedStream):
            setattr(sys, name, OrderedStream(stream))


def _ordered_record_factory(previous: Callable[..., logging.LogRecord]) -> Callable[..., Any]:
    def make_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        if (_pending or _traced_pending or _flushing) and not getattr(
                _local, "making_record", False):
            flush()
        return previous(*args, **kwargs)
    return make_record


def _flushing_hook(hook: Callable[..., Any]) -> Callable[..., Any]:
    def flush_then(*args: Any) -> Any:
        _flush_or_report()
        return hook(*args)
    return flush_then


def _flush_or_report() -> None:
    """Flush everything that can be flushed; report what cannot on stderr, and go on.

    Used at exit and before a traceback, where raising would hide what matters more.
    """
    while True:
        try:
            flush()
            return
        except Exception as error:  # the failing record is dropped; the others are kept
            stream = unwrap(sys.stderr) or sys.__stderr__
            if stream is not None:
                stream.write("nosync_fix.runtime: a deferred record could not be written:\n")
                traceback.print_exception(error, file=stream)


def _forget_parent_records() -> None:
    global _lock, _flushing
    _lock = threading.RLock()
    _pending.clear()
    _traced_pending.clear()
    _flushing = False


def _install() -> None:
    _wrap_standard_streams()
    _lasting_streams.extend(unwrap(stream) for stream in (sys.stdout, sys.stderr)
                              if stream is not None)
    logging.setLogRecordFactory(_ordered_record_factory(logging.getLogRecordFactory()))
    sys.excepthook = _flushing_hook(sys.excepthook)
    threading.excepthook = _flushing_hook(threading.excepthook)
    # Registered after logging's own shutdown hook, so it runs before it (atexit is LIFO)
    # and file handlers are still open.
    atexit.register(_flush_or_report)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_forget_parent_records)


_install()
