"""Counting host reads of device values (syncs) while eager code runs.

Two interception layers work together, because neither sees everything
(measured on torch 2.13):

* a ``TorchFunctionMode`` sees the Python-level reads by name: ``item``,
  ``tolist``, ``numpy``, ``__bool__``, ``__float__``, ``__int__``,
  ``__index__``, ``__format__``, ``__repr__``, copies to the CPU, ``nonzero``,
  ``masked_select``, ``unique``, ``equal`` ... — ``tolist`` and printing a
  tensor are invisible to a dispatch mode, which never sees them read memory;
* a ``TorchDispatchMode`` sees what library code reads below Python
  (``aten._local_scalar_dense``, ``aten.nonzero`` behind boolean-mask
  indexing or one-argument ``torch.where``, device-to-host ``copy_`` such as
  ``cpu_losses[k] = loss``).

A read seen by the function layer is counted once: the dispatch layer ignores
the aten calls made on its behalf.

Dynamo does not trace frames while a custom dispatch mode is active, so this
counter is for eager runs only; graph breaks are measured separately.

On an accelerator, a read of a CPU tensor is not a sync and is not counted.
On a CPU run every read is counted: there is no device queue, so what is
counted are the reads that would be syncs on an accelerator; copies to the CPU
(``.cpu()``, ``.to("cpu")``) are counted as well, although they copy nothing
there, but only where the call names the CPU: ``x.to(device)`` with ``device``
holding the run's device (the CPU here) copies to the accelerator on one and is
never a sync (torch's own ``clip_grad_norm_`` does it once per gradient).
"""

from __future__ import annotations

import linecache
import re
import sys
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

#: Python-level functions and methods that read tensor values on the host.
_FUNCTION_READS = {
    "item": "item",
    "tolist": "tolist",
    "numpy": "numpy",
    "__array__": "numpy",
    "__bool__": "bool",
    "__float__": "float",
    "__int__": "int",
    "__index__": "index",
    "__format__": "format",
    "__repr__": "repr",
    "nonzero": "nonzero",
    "argwhere": "nonzero",
    "masked_select": "masked_select",
    "unique": "unique",
    "unique_consecutive": "unique",
    "equal": "equal",
    "allclose": "equal",
}

#: aten operators that make the host wait for values (seen by the dispatch layer).
_ATEN_READS = {
    "_local_scalar_dense": "item",
    "is_nonzero": "bool",
    "nonzero": "nonzero",
    "masked_select": "masked_select",
    "_unique": "unique",
    "_unique2": "unique",
    "unique_dim": "unique",
    "unique_consecutive": "unique",
    "equal": "equal",
    "allclose": "equal",
    "bincount": "bincount",
}

#: What the CUDA sync debug mode says when it flags an operation.
_CUDA_SYNC_WARNING = "synchronizing CUDA operation"


@dataclass
class SyncCount:
    """The host reads seen in one or more calls."""

    calls: int = 0
    total: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    #: (line in the measured file or 0 when the read came from elsewhere, kind) -> count
    by_site: Counter[tuple[int, str]] = field(default_factory=Counter)
    #: Warnings raised by ``torch.cuda.set_sync_debug_mode("warn")`` (CUDA only).
    cuda_sync_warnings: int = 0

    def add(self, other: SyncCount) -> None:
        self.calls += other.calls
        self.total += other.total
        self.by_kind.update(other.by_kind)
        self.by_site.update(other.by_site)
        self.cuda_sync_warnings += other.cuda_sync_warnings

    @property
    def per_call(self) -> float:
        return self.total / self.calls if self.calls else 0.0


class _Reads:
    """State shared by the two interception layers during one counted block."""

    def __init__(self, filename: str, count_cpu: bool) -> None:
        self.filename = filename
        self.count_cpu = count_cpu
        self.count = SyncCount()
        #: > 0 while a read counted by the function layer runs (its aten calls are not new reads)
        self.inside = 0
        #: Flushes of nosync_fix.runtime already counted (by their serial number).
        self.flushes: set[int] = set()

    def counts(self, tensor: object) -> bool:
        return isinstance(tensor, torch.Tensor) and (
            self.count_cpu or tensor.device.type not in ("cpu", "meta"))

    def record(self, kind: str) -> None:
        if self.count_cpu and kind == "item" and _reads_optimizer_step_counter():
            return
        serial = _deferred_flush_serial()
        if serial is not None:
            # Deferred logging copies every pending value in one transfer and formats
            # host copies (not reads on an accelerator): one flush is one sync.
            if serial in self.flushes:
                return
            self.flushes.add(serial)
            kind = "deferred flush"
        self.count.total += 1
        self.count.by_kind[kind] += 1
        self.count.by_site[(self._line(), kind)] += 1

    def _line(self) -> int:
        """The innermost line of the measured file on the stack (0 if none)."""
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                return frame.f_lineno
            frame = frame.f_back  # type: ignore[assignment]
        return 0

    # -- classification -----------------------------------------------------------------------

    def function_read(self, func: Any, args: tuple, kwargs: dict) -> str | None:
        name = getattr(func, "__name__", "")
        if not args:
            return None
        subject = args[0]
        if name in _FUNCTION_READS:
            return _FUNCTION_READS[name] if self.counts(subject) else None
        if name == "where" and len(args) == 1 and not kwargs:
            return "nonzero" if self.counts(subject) else None
        if name in ("__getitem__", "__setitem__") and len(args) >= 2:
            return "boolean mask" if self.counts(subject) and _has_mask(args[1]) else None
        if name in ("cpu", "to", "copy_"):
            if _is_device_to_host(name, args, kwargs):
                return "to host"
            # On a CPU run the copy is a no-op, but on an accelerator the same line is a
            # blocking device-to-host copy: count it like the other reads. Not so
            # ``x.to(device)`` where ``device`` merely holds the run's device (the CPU
            # here, the accelerator there: a copy to the device, never a sync); only a
            # call that names the CPU in its own text counts.
            return "to host" if self.count_cpu and _is_copy_to_cpu(name, args, kwargs) \
                and (name == "cpu" or _names_the_cpu(_caller())) else None
        return None

    def aten_read(self, func: Any, args: tuple, kwargs: dict) -> str | None:
        packet = getattr(func, "overloadpacket", None)
        name = getattr(packet, "__name__", "")
        subject = args[0] if args else None
        if name in _ATEN_READS:
            return _ATEN_READS[name] if self.counts(subject) else None
        if name == "repeat_interleave":
            # Only the overloads whose repeats are a tensor need its values for the size.
            data_dependent = getattr(func, "_overloadname", "") in ("Tensor", "self_Tensor")
            return "repeat_interleave" if (
                data_dependent and kwargs.get("output_size") is None
                and self.counts(subject)) else None
        if name in ("index", "index_put", "index_put_") and len(args) >= 2:
            indices = args[1] or ()
            return "boolean mask" if self.counts(subject) and any(
                _is_mask(i) for i in indices) else None
        if name in ("_to_copy", "copy_"):
            return "to host" if _is_device_to_host(name, args, kwargs) else None
        return None


def _reads_optimizer_step_counter() -> bool:
    """Whether torch.optim is reading its ``step`` counter (``_get_value``).

    With the default ``capturable=False`` optimizers keep that counter in a CPU
    tensor whatever the parameters' device, so the read is never a sync; on a
    CPU run it must not be counted as one.
    """
    frame = sys._getframe(3)
    for _ in range(4):
        if frame is None:
            return False
        if frame.f_code.co_name == "_get_value" and frame.f_code.co_filename.replace(
                "\\", "/").endswith("torch/optim/optimizer.py"):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _deferred_flush_serial() -> int | None:
    """The serial number of the nosync_fix.runtime flush making this read, if any."""
    frame = sys._getframe(3)
    while frame is not None:
        if frame.f_code.co_name == "_flush_locked" and frame.f_code.co_filename.replace(
                "\\", "/").endswith("nosync_fix/runtime/_buffer.py"):
            return sys.modules["nosync_fix.runtime._buffer"].flush_serial
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _is_mask(index: object) -> bool:
    return isinstance(index, torch.Tensor) and index.dtype in (torch.bool, torch.uint8)


def _has_mask(index: object) -> bool:
    if isinstance(index, (tuple, list)):
        return any(_has_mask(i) for i in index)
    return _is_mask(index)


def _is_device_to_host(name: str, args: tuple, kwargs: dict) -> bool:
    """A blocking copy from an accelerator into CPU memory."""
    if kwargs.get("non_blocking") is True:
        return False
    if name == "copy_":
        if len(args) < 2 or (len(args) > 2 and args[2] is True):  # copy_(src, non_blocking)
            return False
        dst, src = args[0], args[1]
        return (isinstance(dst, torch.Tensor) and isinstance(src, torch.Tensor)
                and dst.device.type == "cpu" and src.device.type not in ("cpu", "meta"))
    subject = args[0] if args else None
    if not isinstance(subject, torch.Tensor) or subject.device.type in ("cpu", "meta"):
        return False
    if name == "cpu":
        return True
    targets = list(args[1:]) + [kwargs.get("device")]
    for target in targets:
        if isinstance(target, torch.Tensor):
            return target.device.type == "cpu"
        if isinstance(target, (str, torch.device)):
            try:
                return torch.device(target).type == "cpu"
            except (RuntimeError, TypeError):
                return False
    return False


def _is_copy_to_cpu(name: str, args: tuple, kwargs: dict) -> bool:
    """``t.cpu()`` or ``t.to("cpu")`` (any tensor): a device-to-host copy wherever ``t``
    lives on an accelerator."""
    subject = args[0] if args else None
    if not isinstance(subject, torch.Tensor) or kwargs.get("non_blocking") is True:
        return False
    if name == "cpu":
        return True
    if name != "to":
        return False
    for target in [*args[1:], kwargs.get("device")]:
        if isinstance(target, (str, torch.device)):
            try:
                return torch.device(target).type == "cpu"
            except (RuntimeError, TypeError):
                return False
    return False


def _caller() -> Any:
    """The frame of the code whose torch call the function layer is handling."""
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename == __file__ or frame.f_code.co_filename
                                 .replace("\\", "/").endswith("torch/overrides.py")):
        frame = frame.f_back  # type: ignore[assignment]
    return frame


_CPU_WORD = re.compile("cpu", re.IGNORECASE)


def _names_the_cpu(frame: Any) -> bool:
    """Whether the call that ``frame`` is making names the CPU in its source text
    (``x.to("cpu")``, ``x.to(torch.device("cpu"))``, ``x.to(cpu)``), as opposed to a
    target that only happens to be the CPU on this run (``x.to(device)``,
    ``x.to(y.device)``, ``x.to(y)``). Where the text cannot be found it is assumed to:
    a copy counted too many is safer than a sync missed."""
    try:
        code = frame.f_code
        positions = list(code.co_positions())
        line, end_line, column, end_column = positions[frame.f_lasti // 2]
        if line is None or end_line is None or column is None or end_column is None:
            return True
        lines = linecache.getlines(code.co_filename, frame.f_globals)
        if not lines or end_line > len(lines):
            return True
        chunk = [lines[i].encode() for i in range(line - 1, end_line)]
        if len(chunk) == 1:
            text = chunk[0][column:end_column]
        else:
            text = chunk[0][column:] + b"".join(chunk[1:-1]) + chunk[-1][:end_column]
    except (AttributeError, IndexError, TypeError, ValueError):
        return True
    return bool(_CPU_WORD.search(text.decode(errors="replace")))


class _FunctionLayer(TorchFunctionMode):
    def __init__(self, reads: _Reads) -> None:
        super().__init__()
        self.reads = reads

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        if self.reads.inside:
            return func(*args, **kwargs)
        kind = self.reads.function_read(func, args, kwargs)
        if kind is None:
            return func(*args, **kwargs)
        self.reads.record(kind)
        self.reads.inside += 1
        try:
            return func(*args, **kwargs)
        finally:
            self.reads.inside -= 1


class _DispatchLayer(TorchDispatchMode):
    def __init__(self, reads: _Reads) -> None:
        super().__init__()
        self.reads = reads

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        if not self.reads.inside:
            kind = self.reads.aten_read(func, args, kwargs)
            if kind is not None:
                self.reads.record(kind)
        return func(*args, **kwargs)


@contextmanager
def count_syncs(filename: str, device: str) -> Iterator[SyncCount]:
    """Count the host reads made inside the block; sites are lines of ``filename``.

    ``device`` is the device the code runs on: on "cpu" every read is counted,
    elsewhere only reads of tensors that live on the accelerator. On CUDA the
    driver's own sync detector (``torch.cuda.set_sync_debug_mode("warn")``) runs
    as well and its warnings are counted separately.
    """
    with counting(_Reads(filename, count_cpu=device == "cpu"), device) as count:
        yield count


@contextmanager
def counting(reads: _Reads, device: str) -> Iterator[SyncCount]:
    """:func:`count_syncs` with the reads' state given (a subclass that places reads
    elsewhere: the profile's, in every file of the user's code)."""
    reads.count.calls = 1
    if not (device.startswith("cuda") and torch.cuda.is_available()):
        with _FunctionLayer(reads), _DispatchLayer(reads):
            yield reads.count
        return
    previous_mode = torch.cuda.get_sync_debug_mode()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            with _FunctionLayer(reads), _DispatchLayer(reads):
                yield reads.count
        finally:
            torch.cuda.set_sync_debug_mode(previous_mode)
    reads.count.cuda_sync_warnings = sum(
        1 for w in caught if _CUDA_SYNC_WARNING in str(w.message))
    # The other warnings belong to the program: hand them on.
    for w in caught:
        if _CUDA_SYNC_WARNING not in str(w.message):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
