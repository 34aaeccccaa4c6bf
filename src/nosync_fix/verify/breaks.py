"""Counting graphs and graph breaks of a function under torch.compile.

The entry is compiled with the chosen backend wrapped in a counter, and its
first call is observed: the counter sees every graph handed to the backend,
and dynamo's ``graph_breaks`` log (what ``TORCH_LOGS=graph_breaks`` prints)
says where and why each graph ended. The log matters: since torch 2.x a graph
break inside a ``for``/``while`` loop makes dynamo skip the whole frame and run
it in eager mode, and ``torch._dynamo.explain`` then reports no break at all
(measured on torch 2.13: a loop with ``total += t.item()`` gives 0 graphs and
-1 breaks). Dynamo also stops at the first break of a loop, so a loop's later
breaks show only once the earlier ones are gone.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from .loading import quiet

_FRAME = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+)', re.MULTILINE)
_AT = re.compile(r"in user code at (?P<file>.+):(?P<line>\d+)\s*$", re.MULTILINE)
_HEADERS = (
    "Encountered graph break when attempting",
    "Failed to handle graph break gracefully",
    "Graph break encountered",
    "*** While handling this graph break",
)
_SKIPPED = ("Skipping the function and falling back to eager",
            "will skip tracing the frame", "results in a skip", "frame skipped")


@dataclass(frozen=True)
class BreakReason:
    """One graph break: why, and where in the measured file."""

    reason: str
    #: The line of the measured file at the innermost frame in it (0: not in the file).
    line: int
    #: Where dynamo stopped, when that is outside the measured file (torch internals).
    location: str = ""
    #: Dynamo gave up on the whole frame and ran it in eager mode.
    frame_skipped: bool = False


@dataclass
class BreakReport:
    graph_count: int | None = None
    #: Distinct break sites (reason and place); dynamo may log one site several times
    #: (once when it meets it, again when it gives up on the frame, again per recompile).
    graph_breaks: int | None = None
    reasons: list[BreakReason] = field(default_factory=list)
    #: How many graph-break messages dynamo logged in all.
    events: int = 0
    error: str | None = None

    @property
    def frames_skipped(self) -> int:
        return sum(1 for r in self.reasons if r.frame_skipped)


class _Collector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record must not stop the measurement
            return
        if record.exc_info and record.exc_info[1] is not None:
            message += "\nException: " + str(record.exc_info[1])
        self.messages.append(message)


@contextmanager
def dynamo_quiet() -> Iterator[None]:
    """Keep dynamo's and inductor's warnings (breaks, recompiles) off the terminal."""
    noisy = [logging.getLogger("torch._dynamo"), logging.getLogger("torch._inductor")]
    levels = [lg.level for lg in noisy]
    for lg in noisy:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(noisy, levels, strict=True):
            lg.setLevel(level)


@contextmanager
def _graph_break_log() -> Iterator[_Collector]:
    """Collect dynamo's graph-break log records (and only here: nothing is printed)."""
    collector = _Collector()
    artifact_loggers = [logging.getLogger(name) for name in
                        list(logging.Logger.manager.loggerDict)
                        if name.startswith("torch.") and name.endswith(".__graph_breaks")]
    saved = [(lg, lg.level, lg.propagate) for lg in artifact_loggers]
    for lg in artifact_loggers:
        lg.setLevel(logging.DEBUG)
        lg.propagate = False
        lg.addHandler(collector)
    try:
        with dynamo_quiet():
            yield collector
    finally:
        for lg, level, propagate in saved:
            lg.removeHandler(collector)
            lg.setLevel(level)
            lg.propagate = propagate


def parse_break(message: str, filename: str) -> BreakReason | None:
    """A graph-break log message as a :class:`BreakReason` (None if it is not one)."""
    if "Graph break" not in message and "graph break" not in message:
        return None
    stack = message
    for marker in ("User code traceback:", "occurred in the following user code:"):
        if marker in stack:
            stack = stack.split(marker, 1)[1]
    frames = [(m["file"], int(m["line"])) for m in _FRAME.finditer(stack)]
    at = _AT.search(message)
    if at:
        frames.append((at["file"], int(at["line"])))
    in_file = [line for file, line in frames if file == filename]
    line = in_file[-1] if in_file else 0
    location = ""
    if at and at["file"] != filename:
        location = f"{_short_path(at['file'])}:{at['line']}"
    return BreakReason(reason=_reason(message), line=line, location=location,
                       frame_skipped=any(s in message for s in _SKIPPED))


def _reason(message: str) -> str:
    """The first informative line of dynamo's message, with its explanation when short."""
    text = message.split("Graph Break Reason:", 1)[1] if "Graph Break Reason:" in message \
        else message.split("\n", 1)[-1] if message.startswith("Graph break:") else message
    if message.startswith("Graph break:") and "Exception:" in message:
        text = message.rsplit("Exception:", 1)[1]
    lines = [ln.strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(_HEADERS)
             and not ln.startswith(("File ", "User code traceback", "Graph break in user"))]
    if not lines:
        return "graph break"
    reason = lines[0]
    explanation = next((ln[len("Explanation:"):].strip() for ln in lines[1:4]
                        if ln.startswith("Explanation:")), "")
    if "marked as skipped" in reason and explanation:
        # "Attempted to inline function marked as skipped" says nothing without the name.
        named = re.search(r"function `([^`]+)`", explanation)
        if named:
            reason += f": {named.group(1)}"
    return reason


def _short_path(path: str) -> str:
    marker = "site-packages/"
    return path.split(marker, 1)[1] if marker in path else path


class CountingBackend:
    """A torch.compile backend that counts the graphs it is given and hands them on."""

    def __init__(self, backend: str) -> None:
        self.backend = torch._dynamo.lookup_backend(backend)
        self.graphs = 0

    def __call__(self, graph: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        self.graphs += 1
        return self.backend(graph, example_inputs)


@dataclass
class CompiledEntry:
    """An entry compiled with a counting backend, after its first (observed) call."""

    function: Callable[..., Any]
    backend: CountingBackend
    breaks: BreakReport
    #: Seconds of the first call: compilation plus one run.
    first_call_s: float


def compile_and_observe(fn: Callable[..., Any], args: tuple, kwargs: dict, filename: str,
                        backend: str, clock: Callable[[], float]) -> CompiledEntry:
    """Compile ``fn`` with ``backend`` and call it once, collecting graphs and breaks.

    What the call prints is discarded. A failure (in dynamo, the backend or the
    code) is in ``breaks.error``.
    """
    counter = CountingBackend(backend)
    compiled = torch.compile(fn, backend=counter)
    report = BreakReport()
    started = clock()
    with _graph_break_log() as collected, quiet():
        try:
            compiled(*args, **kwargs)
        except Exception as error:
            report.error = f"{type(error).__name__}: {_first_line(str(error))}"
    seconds = clock() - started
    if report.error is None:
        report.graph_count = counter.graphs
        found = [r for r in (parse_break(m, filename) for m in collected.messages)
                 if r is not None]
        report.events = len(found)
        report.reasons = _distinct(found)
        if not report.reasons and counter.graphs > 1:
            # Graphs were split but nothing was logged (another torch version?): say so.
            report.reasons = [BreakReason("graph break (reason not logged)", 0)] * (
                counter.graphs - 1)
        report.graph_breaks = len(report.reasons)
    return CompiledEntry(compiled, counter, report, seconds)


def _distinct(reasons: list[BreakReason]) -> list[BreakReason]:
    """One reason per site, in order of first appearance; skipped if any sighting skipped."""
    sites: dict[tuple[int, str, str], BreakReason] = {}
    for reason in reasons:
        key = (reason.line, reason.reason, reason.location)
        seen = sites.get(key)
        if seen is None:
            sites[key] = reason
        elif reason.frame_skipped and not seen.frame_skipped:
            sites[key] = replace(seen, frame_skipped=True)
    return list(sites.values())


def _first_line(text: str) -> str:
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else ""
