"""Capturing what a call prints: stdout, stderr, logging handlers and warnings."""

from __future__ import annotations

import io
import logging
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field

from .loading import Sink


@dataclass
class Printed:
    stdout: str = ""
    stderr: str = ""
    warnings: list[str] = field(default_factory=list)


def _stream_handlers() -> list[logging.StreamHandler]:
    loggers = [logging.getLogger()] + [
        lg for lg in list(logging.Logger.manager.loggerDict.values())
        if isinstance(lg, logging.Logger)]
    return [h for lg in loggers for h in lg.handlers
            if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)]


@contextmanager
def captured() -> Iterator[Printed]:
    """Everything printed inside the block, by print, sys.std*, logging or warnings.

    Logging handlers that write to the terminal (or to the place the file's
    import-time prints were discarded into) are pointed at the capture for the
    duration, so that what ``logging`` emits is compared too. Warnings are
    recorded as "Category: message", without the file and line (which a rewrite
    shifts).
    """
    out, err = io.StringIO(), io.StringIO()
    printed = Printed()
    terminal_out = {id(sys.stdout), id(sys.__stdout__)}
    terminal_err = {id(sys.stderr), id(sys.__stderr__)}
    swapped: list[tuple[logging.StreamHandler, object]] = []
    for handler in _stream_handlers():
        stream = handler.stream
        target = out if id(stream) in terminal_out else \
            err if id(stream) in terminal_err or isinstance(stream, Sink) else None
        if target is not None:
            swapped.append((handler, stream))
            handler.stream = target
    # The caller flushes deferred output before it reads the capture: prints of the
    # rewritten code stay deferred there, as they would be on the terminal.
    runtime = sys.modules.get("nosync_fix.runtime._buffer")
    deferring = runtime.deferring_to(out, err) if runtime is not None else nullcontext()
    try:
        with warnings.catch_warnings(record=True) as caught, deferring, \
                redirect_stdout(out), redirect_stderr(err):
            warnings.simplefilter("always")
            yield printed
    finally:
        for handler, stream in swapped:
            handler.stream = stream  # type: ignore[assignment]
        printed.stdout, printed.stderr = out.getvalue(), err.getvalue()
        printed.warnings = [f"{w.category.__name__}: {w.message}" for w in caught]
