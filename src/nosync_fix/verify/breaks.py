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

Where dynamo skipped a frame, :func:`count_all_breaks` counts again on a copy
of the file whose loop bodies are functions of their own (see
:mod:`.loopbodies`), with dynamo allowed to resume inside loops
(:func:`resume_in_loops`): that count covers the breaks the skip hid, and it is
itself marked as a lower bound when dynamo still gives up on a frame.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch._dynamo.utils import counters

from .loading import flush_deferred_output, quiet

#: Compiled calls after the first one, over which recompiles are counted.
REPEATS = 20

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
#: Reasons that say why dynamo could not go on after a break (and skipped the frame), not
#: a break of their own: they mark the frame skipped but are not counted as breaks.
SKIP_CAUSES = ("Reconstruction failure", "Read uninitialized cell")
_GENERATOR = "Attempt to trace generator"


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

    @property
    def counted(self) -> bool:
        """A break of its own; not only the reason dynamo gave up after another break."""
        return not (self.frame_skipped and self.reason.startswith(SKIP_CAUSES))


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
    #: Frames dynamo attempted and frames it converted on the first call
    #: (``torch._dynamo.utils.counters["frames"]``).
    frames_total: int = 0
    frames_ok: int = 0
    #: Frames of generators that dynamo does not compile on their own ("Attempt to trace
    #: generator": a generator expression run from eager code, ``model.parameters()``):
    #: not a skip at a break, and not counted as a skipped frame.
    generator_frames: int = 0
    #: How the breaks were counted: "dynamo" (as torch.compile runs the code) or "all"
    #: (:func:`count_all_breaks`: loops resumed, loop bodies as frames).
    method: str = "dynamo"
    #: Loop bodies moved into functions of their own for an "all" count.
    loops_split: int = 0

    @property
    def frames_skipped(self) -> int:
        return max(sum(1 for r in self.reasons if r.frame_skipped),
                   self.frames_total - self.frames_ok - self.generator_frames)

    @property
    def lower_bound(self) -> bool:
        """Dynamo gave up on a frame: breaks past the one that stopped it were not seen."""
        return self.graph_breaks is not None and self.frames_skipped > 0

    def skipped_sites(self, lines: list[str]) -> set[tuple[str, str]]:
        """(reason, source text) of each break that made dynamo skip its frame."""
        return {(r.reason, lines[r.line - 1].strip() if 0 < r.line <= len(lines) else "")
                for r in self.reasons if r.frame_skipped}

    def as_dict(self, lines: list[str]) -> dict[str, Any]:
        return {
            "method": self.method,
            "graph_count": self.graph_count,
            "graph_breaks": self.graph_breaks,
            "lower_bound": self.lower_bound,
            "frames_skipped": self.frames_skipped if self.graph_breaks is not None else None,
            "frames": {"total": self.frames_total, "ok": self.frames_ok,
                       "generators": self.generator_frames},
            "loops_split": self.loops_split,
            "break_reasons": [
                {"reason": r.reason, "line": r.line or None,
                 "source": lines[r.line - 1].strip() if 0 < r.line <= len(lines) else None,
                 "location": r.location or None, "frame_skipped": r.frame_skipped,
                 "counted": r.counted}
                for r in self.reasons],
            "error": self.error,
        }


@dataclass
class RepeatReport:
    """What ``REPEATS`` further compiled calls on the same inputs did."""

    calls: int = 0
    #: Graphs compiled during those calls: guards that failed on same-shaped inputs.
    recompiles: int = 0
    #: Calls that ran fewer compiled graphs than the first call did (eager fallback).
    eager_calls: int = 0
    #: Dynamo said it reached its recompile limit (and runs the frame eagerly from then on).
    recompile_limit: bool = False
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "recompiles": self.recompiles,
                "eager_calls": self.eager_calls, "recompile_limit": self.recompile_limit,
                "error": self.error}


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
        #: Compiled graphs run so far (each call of a graph the backend returned).
        self.runs = 0

    def __call__(self, graph: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        self.graphs += 1
        compiled = self.backend(graph, example_inputs)

        @functools.wraps(compiled)  # keeps _boxed_call and the like
        def run(*args: Any, **kwargs: Any) -> Any:
            self.runs += 1
            return compiled(*args, **kwargs)
        return run


@dataclass
class CompiledEntry:
    """An entry compiled with a counting backend, after its first (observed) call."""

    function: Callable[..., Any]
    backend: CountingBackend
    breaks: BreakReport
    #: Seconds of the first call: compilation plus one run.
    first_call_s: float
    #: Compiled graphs the first call ran.
    first_runs: int = 0


def compile_and_observe(fn: Callable[..., Any], args: tuple, kwargs: dict, filename: str,
                        backend: str, clock: Callable[[], float]) -> CompiledEntry:
    """Compile ``fn`` with ``backend`` and call it once, collecting graphs and breaks.

    What the call prints is discarded. A failure (in dynamo, the backend or the
    code) is in ``breaks.error``.
    """
    counter = CountingBackend(backend)
    compiled = torch.compile(fn, backend=counter)
    report = BreakReport()
    counters.clear()
    started = clock()
    with _graph_break_log() as collected, quiet():
        try:
            compiled(*args, **kwargs)
        except Exception as error:
            report.error = f"{type(error).__name__}: {_first_line(str(error))}"
    seconds = clock() - started
    report.frames_total = counters["frames"]["total"]
    report.frames_ok = counters["frames"]["ok"]
    report.generator_frames = sum(n for key, n in counters["unimplemented"].items()
                                  if key.startswith(_GENERATOR))
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
        report.graph_breaks = sum(r.counted for r in report.reasons)
    return CompiledEntry(compiled, counter, report, seconds, counter.runs)


@contextmanager
def resume_in_loops() -> Iterator[bool]:
    """Let dynamo resume after a graph break inside a loop instead of skipping the frame.

    torch 2.13 refuses (``maybe_has_backedge``: "graph break in loop ... Skipping the
    frame"), not because it cannot build the resume function but because a loop would
    recompile it on every iteration. For counting that costs only time, so the check
    is switched off while the breaks are counted, and never while code is compared or
    timed. Yields False (and changes nothing) where this torch has no such check.
    """
    try:
        from torch._dynamo.symbolic_convert import InstructionTranslatorBase
    except ImportError:  # another torch: no count beyond the skip
        yield False
        return
    check = InstructionTranslatorBase.__dict__.get("maybe_has_backedge")
    if check is None:
        yield False
        return
    InstructionTranslatorBase.maybe_has_backedge = lambda self: False  # type: ignore
    try:
        yield True
    finally:
        InstructionTranslatorBase.maybe_has_backedge = check  # type: ignore


def count_all_breaks(fn: Callable[..., Any], args: tuple, kwargs: dict, filename: str,
                     loops_split: int, clock: Callable[[], float]) -> BreakReport:
    """Every break dynamo meets in one call of ``fn`` when it may resume inside loops.

    ``fn`` comes from the copy of the file made by :func:`.loopbodies.split_loop_bodies`
    (``loops_split`` bodies moved). Graphs go to the ``eager`` backend: where dynamo
    breaks does not depend on the backend, and nothing of this call is kept. Call it
    with dynamo reset.
    """
    with resume_in_loops() as resumed:
        observed = compile_and_observe(fn, args, kwargs, filename, "eager", clock)
    report = observed.breaks
    report.method = ("all" if loops_split else "all, loop bodies not split") if resumed \
        else "all, loops not resumed"
    report.loops_split = loops_split
    return report


def repeat_calls(entry: CompiledEntry, args: tuple, kwargs: dict,
                 calls: int = REPEATS) -> RepeatReport:
    """Call a compiled entry ``calls`` more times, flushing deferred output only at the end."""
    report = RepeatReport()
    graphs = entry.backend.graphs
    counters["unimplemented"].clear()
    with _graph_break_log(), quiet():
        try:
            for _ in range(calls):
                runs = entry.backend.runs
                entry.function(*args, **kwargs)
                report.calls += 1
                if entry.backend.runs - runs < entry.first_runs:
                    report.eager_calls += 1
        except Exception as error:
            report.error = f"{type(error).__name__}: {_first_line(str(error))}"
        finally:
            try:
                flush_deferred_output()
            except Exception as error:
                report.error = report.error or (
                    f"deferred output failed: {type(error).__name__}: {error}")
    report.recompiles = entry.backend.graphs - graphs
    report.recompile_limit = any("recompile limit" in key.lower()
                                 or "cache_size_limit" in key for key in counters["unimplemented"])
    return report


def _distinct(reasons: list[BreakReason]) -> list[BreakReason]:
    """One reason per site, in order of first appearance; skipped if any sighting skipped.

    A break outside the file seen once from a line of it and once with no line of it
    (dynamo's traceback of a resumed frame can lack the caller) is one site.
    """
    sites: dict[tuple[int, str, str], BreakReason] = {}
    for reason in reasons:
        key = (reason.line, reason.reason, reason.location)
        seen = sites.get(key)
        if seen is None:
            sites[key] = reason
        elif reason.frame_skipped and not seen.frame_skipped:
            sites[key] = replace(seen, frame_skipped=True)
    placed = {(r.reason, r.location): key for key, r in sites.items() if r.line and r.location}
    for key, reason in list(sites.items()):
        other = placed.get((reason.reason, reason.location))
        if reason.line or not reason.location or other is None:
            continue
        del sites[key]
        if reason.frame_skipped:
            sites[other] = replace(sites[other], frame_skipped=True)
    return list(sites.values())


def _first_line(text: str) -> str:
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else ""
