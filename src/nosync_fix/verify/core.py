"""``verify()``: run the original and the rewritten file side by side and compare.

The phases, each on fresh module objects seeded identically:

1. equivalence: ``trials`` seeds; each version is loaded, given its inputs and
   called in eager mode while its host reads are counted; everything the call
   left behind is compared (see :mod:`.compare`), and the original runs
   instrumented to count the outcomes of the conditions the rewrite touched
   (see :mod:`.coverage`). On the first ``compiled_trials`` seeds both versions
   are also compiled with ``backend`` and called once more: the compiled
   rewrite must agree with the eager original or with the compiled original
   (where the compiler itself changes a value, both compiled versions share the
   change), path by path;
2. compiled: each version is compiled with ``backend`` from a clean slate
   (dynamo reset, inductor's caches off); its first call gives the graphs and
   graph breaks (see :mod:`.breaks`), then ``REPEATS`` more calls without a
   flush in between count recompiles and calls that fell back to eager mode;
   then the two versions are timed, alternating;
3. eager time, the two versions alternating.
"""

from __future__ import annotations

import contextlib
import datetime
import difflib
import math
import os
import platform
import sys
import time
import tokenize
import types
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from . import adversarial as adversarial_inputs
from .breaks import (
    REPEATS,
    BreakReport,
    RepeatReport,
    compile_and_observe,
    count_all_breaks,
    dynamo_quiet,
    repeat_calls,
)
from .capture import Printed, captured
from .compare import (
    EXACT,
    Comparison,
    Observation,
    Observer,
    Raised,
    Tolerance,
    compare,
    rng_state,
    tolerance_for,
)
from .coverage import PROBE, VALUE, Condition, changes, instrument
from .loading import (
    LoadedModules,
    NoAdversarialInput,
    Source,
    VerifyUsageError,
    flush_deferred_output,
    function,
    importable_from,
    make_inputs,
    package_of,
    quiet,
    seed_everything,
)
from .loopbodies import split_loop_bodies
from .memory import MemoryReport, grows
from .memory import measure as measure_memory_of
from .retention import Retention, watch_retention
from .syncs import SyncCount, count_syncs
from .timing import Timed, Timing, noise_band, time_group

BACKENDS = ("inductor", "aot_eager", "eager")
CPU_NOTE = "CPU: no device queue, sync cost not represented"
#: Failures listed in a report (the count of failing trials is always complete).
MAX_FAILURES = 20


@dataclass
class VersionReport:
    """What was measured for one version of the file."""

    filename: str
    breaks: BreakReport = field(default_factory=BreakReport)
    #: Where dynamo skipped a frame (of either version): every break counted again, with
    #: loops resumed and loop bodies as frames (see :func:`.breaks.count_all_breaks`).
    all_breaks: BreakReport | None = None
    syncs: SyncCount = field(default_factory=SyncCount)
    #: Operations that extended an autograd graph after backward() consumed it.
    retention: Retention = field(default_factory=Retention)
    #: Tensor memory over repeated eager calls (see :mod:`.memory`).
    memory: MemoryReport | None = None
    eager: Timing | None = None
    compiled: Timing | None = None
    compile_s: float | None = None
    #: The compiled calls after the first: recompiles and eager fallbacks.
    repeats: RepeatReport | None = None
    #: Why a timing is missing: the version failed to run eagerly or to compile.
    eager_error: str | None = None
    compile_error: str | None = None
    #: The version could not be loaded at all.
    load_error: str | None = None

    @property
    def graph_count(self) -> int | None:
        return self.breaks.graph_count

    @property
    def all_counted(self) -> bool:
        """Every break was counted (see :attr:`all_breaks`) without an error."""
        return self.all_breaks is not None and self.all_breaks.graph_breaks is not None

    @property
    def graph_breaks(self) -> int | None:
        return self.breaks.graph_breaks

    @property
    def recompiles(self) -> int | None:
        """Graphs compiled after the first call (guards that failed: recompilations)."""
        return self.repeats.recompiles if self.repeats and not self.repeats.error else None

    @property
    def eager_calls(self) -> int | None:
        return self.repeats.eager_calls if self.repeats and not self.repeats.error else None

    @property
    def syncs_per_call(self) -> float | None:
        return self.syncs.per_call if self.syncs.calls else None

    @property
    def eager_ms(self) -> float | None:
        return self.eager.median_ms if self.eager else None

    @property
    def compiled_ms(self) -> float | None:
        return self.compiled.median_ms if self.compiled else None

    def as_dict(self, lines: list[str]) -> dict[str, Any]:
        calls = self.syncs.calls or 1
        return {
            "graph_count": self.graph_count,
            "graph_breaks": self.graph_breaks,
            "frames_skipped": self.breaks.frames_skipped if self.graph_breaks is not None
            else None,
            "graph_breaks_lower_bound": self.breaks.lower_bound,
            "frames": {"total": self.breaks.frames_total, "ok": self.breaks.frames_ok},
            "break_reasons": [
                {"reason": r.reason, "line": r.line or None, "source": _line(lines, r.line),
                 "location": r.location or None, "frame_skipped": r.frame_skipped}
                for r in self.breaks.reasons],
            "break_events": self.breaks.events if self.graph_breaks is not None else None,
            "break_error": self.breaks.error,
            "all_graph_breaks": self.all_breaks.as_dict(lines) if self.all_breaks else None,
            "syncs": _round(self.syncs_per_call),
            "syncs_by_kind": {kind: _round(n / calls)
                              for kind, n in sorted(self.syncs.by_kind.items())},
            "sync_sites": [
                {"line": line or None, "kind": kind, "per_call": _round(n / calls),
                 "source": _line(lines, line)}
                for (line, kind), n in sorted(self.syncs.by_site.items())],
            "graph_retention": _round(self.retention.per_call) if self.retention.calls
            else None,
            "graph_retention_sites": [
                {"line": line or None, "per_call": _round(n / (self.retention.calls or 1)),
                 "source": _line(lines, line)}
                for line, n in sorted(self.retention.by_line.items())],
            "memory": self.memory.as_dict() if self.memory else None,
            "cuda_sync_warnings": _round(self.syncs.cuda_sync_warnings / calls)
            if self.syncs.calls else None,
            "eager_ms": _round(self.eager_ms),
            "compiled_ms": _round(self.compiled_ms),
            "eager": self.eager.as_dict() if self.eager else None,
            "compiled": self.compiled.as_dict() if self.compiled else None,
            "compile_s": _round(self.compile_s),
            "recompiles": self.recompiles,
            "repeated_calls": self.repeats.as_dict() if self.repeats else None,
            "eager_error": self.eager_error,
            "compile_error": self.compile_error,
            "load_error": self.load_error,
        }


@dataclass
class Failure:
    trial: int
    seed: int
    path: str
    detail: str
    #: The adversarial input of the trial (a kind of :mod:`.adversarial`), "" for a seed's own.
    input: str = ""


@dataclass
class Equivalence:
    trials: int = 0
    failed_trials: int = 0
    max_abs_diff: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    branch_coverage: list[Condition] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: A failure before any trial could run (the rewritten file does not load, ...).
    fatal: str | None = None
    #: Trials in which the original itself raised, and the first such exception.
    original_raised: int = 0
    original_error: str | None = None
    #: Trials also run compiled, and how many of those the compiled rewrite failed.
    compiled_trials: int = 0
    compiled_failed: int = 0
    #: Calls on adversarial inputs (see :mod:`.adversarial`), and how many of them differed.
    adversarial_trials: int = 0
    adversarial_failed: int = 0
    #: Inputs the hypothesis search tried (shrinking included), and the shrunk input on
    #: which the versions differ ("" when none was found).
    search_tried: int = 0
    search_input: str = ""

    @property
    def vacuous(self) -> bool:
        """The original raised on every trial: nothing real was compared."""
        return self.trials > 0 and self.original_raised == self.trials

    @property
    def passed(self) -> bool:
        return (self.fatal is None and self.failed_trials == 0 and self.trials > 0
                and self.compiled_failed == 0 and self.adversarial_failed == 0
                and not self.vacuous)

    def as_dict(self) -> dict[str, Any]:
        failures = [{"trial": f.trial, "seed": f.seed, "input": f.input or None,
                     "path": f.path, "detail": f.detail} for f in self.failures]
        if self.fatal:
            failures.insert(0, {"trial": None, "seed": None, "path": "", "detail": self.fatal})
        return {
            "trials": self.trials,
            "passed": self.passed,
            "failed_trials": self.failed_trials,
            "compiled_trials": self.compiled_trials,
            "compiled_failed_trials": self.compiled_failed,
            "adversarial_trials": self.adversarial_trials,
            "adversarial_failed_trials": self.adversarial_failed,
            "search": {"tried": self.search_tried, "failing_input": self.search_input or None},
            "max_abs_diff": self.max_abs_diff,
            "failures": failures,
            "branch_coverage": [
                {"line": c.line, "condition": c.text, "kind": c.kind, "why": c.why,
                 "true": c.true, "false": c.false, "both_ways": c.both_ways}
                for c in sorted(self.branch_coverage, key=lambda c: c.line)],
            "warnings": list(self.warnings),
        }


@dataclass
class Report:
    """Everything ``nosync-verify`` measured; ``passed`` decides the exit code."""

    file: str
    entry: str
    inputs: str
    after_file: str | None
    device: str
    device_name: str
    backend: str
    trials: int
    seed: int
    repeat: int
    before: VersionReport
    after: VersionReport
    equivalence: Equivalence
    changed: bool
    fixes: list[str] = field(default_factory=list)
    remaining_findings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: How far numbers may move (the loosest of the applied rules'; exact for none).
    tolerance: Tolerance = EXACT
    #: The rules that set the tolerance.
    tolerance_rules: list[str] = field(default_factory=list)
    #: The original timed again beside itself ("eager", "compiled"): the noise band.
    control: dict[str, Timing] = field(default_factory=dict)
    #: Seconds of the control's first compiled call (the original compiled a second time,
    #: from a clean slate): the noise band of the first-call times.
    control_compile_s: float | None = None
    #: Timing was asked for (False: --no-timing).
    timed: bool = True
    #: A rewritten condition that no trial drove both ways is accepted (--allow-untaken).
    allow_untaken: bool = False
    torch_version: str = torch.__version__
    python_version: str = platform.python_version()
    threads: int = field(default_factory=torch.get_num_threads)
    #: The machine's 1-minute load average when the run started (timings are noisy above
    #: the number of cores).
    load_average: float | None = field(
        default_factory=lambda: round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg")
        else None)
    date: str = field(default_factory=lambda: datetime.datetime.now(
        datetime.timezone.utc).isoformat(timespec="seconds"))
    before_lines: list[str] = field(default_factory=list, repr=False)
    after_lines: list[str] = field(default_factory=list, repr=False)

    @property
    def problems(self) -> list[str]:
        """Why the rewrite is not proven (empty when it is)."""
        found = []
        if self.equivalence.vacuous:
            found.append("the original raised on every trial "
                         f"({self.equivalence.original_error}): nothing was compared; "
                         "check --entry and --inputs")
        elif not self.equivalence.passed:
            found.append("the rewritten code does not behave like the original"
                         if self.equivalence.trials else "no trial could be run")
        if self.equivalence.trials and not self.equivalence.fatal and not self.allow_untaken:
            found.extend(
                f"line {c.line}: `{c.text}` ({c.why}) was not driven both ways "
                f"(true {c.true}, false {c.false}): the rewrite of its untaken side is "
                "unproven (--allow-untaken accepts this)"
                for c in sorted(self.equivalence.branch_coverage, key=lambda c: c.line)
                if not c.both_ways)
        found.extend(self._break_problems())
        found.extend(self._repeat_problems())
        rb, ra = self.before.retention, self.after.retention
        if rb.calls and ra.calls and ra.per_call > rb.per_call + 1e-9:
            lines = ", ".join(str(line) for line in sorted(ra.by_line) if line) or "?"
            found.append(f"the rewritten code keeps autograd graphs alive after backward() "
                         f"({_fmt(rb.per_call)} -> {_fmt(ra.per_call)} operations per call "
                         f"build on a graph backward() consumed, line {lines}): a tensor "
                         "accumulated or kept without .detach()")
        found.extend(self._copies_for_reads())
        if self.before.memory and self.after.memory:
            found.extend(grows(self.before.memory, self.after.memory))
        sb, sa = self.before.syncs_per_call, self.after.syncs_per_call
        if sb is not None and sa is not None and sa > sb + 1e-9:
            found.append(f"more syncs per call after the rewrite ({_fmt(sb)} -> {_fmt(sa)})")
        if self.after.compile_error and not self.before.compile_error:
            found.append("the rewritten code does not compile: " + self.after.compile_error)
        if self.after.eager_error and not self.before.eager_error:
            found.append("the rewritten code fails when timed: " + self.after.eager_error)
        return found

    def _break_problems(self) -> list[str]:
        """More breaks, or a skip the rewrite only moved.

        The counts compared are every break where dynamo skipped a frame (of either
        version), else dynamo's own. A count that is still a lower bound is compared as it
        stands (the rewrite may not have more than the original is known to have). Where
        dynamo still skips the rewritten frame, the break it skips at must be one the
        original has, on a line the rewrite left as it was (or the original's own skip,
        reworded), and a break must have been removed: else the rewrite only moved the
        skip.
        """
        before, after = self.before, self.after
        if before.graph_breaks is None or after.graph_breaks is None:
            if before.graph_breaks is not None and after.breaks.error:
                return ["the graph breaks of the rewritten code could not be measured: "
                        + after.breaks.error]
            return []
        old, new = self._compared_breaks()
        b, a = old.graph_breaks, new.graph_breaks
        assert b is not None and a is not None
        found = []
        if a > b:
            found.append(f"more graph breaks after the rewrite ({_bound(old)} -> {_bound(new)}"
                         + (", the original's a lower bound" if old.lower_bound else "")
                         + (", counted with loops resumed" if old.method != "dynamo" else "")
                         + ")")
        elif new.lower_bound and not old.lower_bound:
            found.append("graph breaks not proven: dynamo skips a frame of the rewritten code "
                         f"({_skips(new, self.after_lines)}) where every break of the "
                         "original was counted, so the rewrite's count is a lower bound")
        moved = self._moved_skips()
        if moved:
            found.append("graph breaks not proven: the rewrite only moves the skip: dynamo "
                         "skips the rewritten frame at " + "; ".join(moved))
        return found

    def _compared_breaks(self) -> tuple[BreakReport, BreakReport]:
        """The counts the verdict compares: every break of both versions where both were
        counted that way, else dynamo's own counts of both."""
        if self.before.all_counted and self.after.all_counted:
            assert self.before.all_breaks is not None and self.after.all_breaks is not None
            return self.before.all_breaks, self.after.all_breaks
        return self.before.breaks, self.after.breaks

    @property
    def break_notes(self) -> list[str]:
        """What the break counts mean where dynamo skipped a frame (for the report)."""
        notes = []
        for label, version in (("original", self.before), ("rewrite", self.after)):
            plain, every = version.breaks, version.all_breaks
            if not plain.lower_bound or plain.graph_breaks is None:
                continue
            text = (f"the {label}'s {_bound(plain)} graph breaks are dynamo's own count: it "
                    f"skipped {plain.frames_skipped} frame(s) at a break and did not look "
                    "further")
            if every is not None and every.graph_breaks is not None:
                how = ("loops resumed and loop bodies as frames" if every.method == "all"
                       else every.method.replace("all, ", ""))
                text += (f"; counted with {how}: {_bound(every)}"
                         + (" (still a lower bound)" if every.lower_bound else " (every break)"))
            elif every is not None and every.error:
                text += (f"; every break could not be counted ({every.error}), so dynamo's "
                         "own counts are compared")
            notes.append(text)
        after = self.after.breaks
        lines = sorted({r.line for r in after.reasons if r.frame_skipped and r.line})
        if after.lower_bound and lines and not self._moved_skips():
            unchanged = _line_map(self.after_lines, self.before_lines)
            notes.append("dynamo still skips the rewritten frame, at "
                         + ", ".join(f"line {n} (the original's line {unchanged.get(n, '?')})"
                                     for n in lines)
                         + ": a break the original has too, on a line the rewrite left as it "
                         "was (or the original's own skip): the skip was not moved there, "
                         "and the counts of every break decide")
        return notes

    def _moved_skips(self) -> list[str]:
        """The rewrite's skip sites that are not the original's own breaks (see above)."""
        plain = self.after.breaks
        skips = [r for r in plain.reasons if r.frame_skipped and r.line]
        if not plain.lower_bound or not skips:
            return []
        before = [*self.before.breaks.reasons, *(self.before.all_breaks.reasons
                                                 if self.before.all_breaks else [])]
        skipped_lines = {r.line for r in before if r.frame_skipped}
        break_lines = {r.line for r in before if r.counted}
        one_for_one = _line_map(self.after_lines, self.before_lines)
        unchanged = _line_map(self.after_lines, self.before_lines, equal_only=True)
        moved, new_site = [], False
        for skip in skips:
            where = f"line {skip.line} ({_line(self.after_lines, skip.line)})"
            if one_for_one.get(skip.line) in skipped_lines:
                continue  # the original's own skip, perhaps reworded
            new_site = True
            line = unchanged.get(skip.line)
            if line is None:
                moved.append(f"{where}, a line the rewrite wrote")
            elif line not in break_lines:
                moved.append(f"{where}, where the original has no known break")
        if new_site and not moved:
            # Some break of the original must be gone: the same reason no longer on the
            # line (left as it was) that had it.
            old, new = self._compared_breaks()
            kept = {(r.reason, unchanged.get(r.line) if r.line else 0) for r in new.reasons
                    if r.counted}
            if all((r.reason, r.line) in kept for r in old.reasons if r.counted):
                moved.append(", ".join(sorted({f"line {s.line}" for s in skips}))
                             + f", and no break of the original was removed ({_bound(old)}"
                             f" -> {_bound(new)})")
        return moved

    def _copies_for_reads(self) -> list[str]:
        """Rewritten lines that copy to the host (``.cpu()``) as often as the lines they
        replace read it: the sync was moved, not removed."""
        before, after = self.before.syncs, self.after.syncs
        if not before.calls or not after.calls:
            return []
        read_at: Counter[int] = Counter()
        for (line, _kind), n in before.by_site.items():
            read_at[line] += n
        replaced = _replaced_blocks(self.after_lines, self.before_lines)
        found = []
        for (line, kind), n in sorted(after.by_site.items()):
            if kind != "to host" or line not in replaced:
                continue
            original = max((read_at[i] for i in replaced[line]), default=0) / before.calls
            if original and n / after.calls >= original - 1e-9:
                found.append(f"line {line} of the rewrite copies to the host "
                             f"({_fmt(n / after.calls)} per call) where the line it replaces "
                             f"read ({_fmt(original)} per call): a blocking copy in place of "
                             "the read moves the sync, it does not remove it")
        return found

    def _repeat_problems(self) -> list[str]:
        before, after = self.before.repeats, self.after.repeats
        if before is None or after is None:
            return []
        if after.error and not before.error:
            return [f"the rewritten code fails when called again compiled: {after.error}"]
        found = []
        if after.recompiles > before.recompiles:
            found.append(f"the rewritten code recompiles on repeated calls with the same "
                         f"inputs ({before.recompiles} -> {after.recompiles} recompiles over "
                         f"{after.calls} calls)")
        if after.eager_calls > before.eager_calls or (after.recompile_limit
                                                      and not before.recompile_limit):
            found.append(f"the rewritten code falls back to eager mode on repeated calls "
                         f"({before.eager_calls} -> {after.eager_calls} of {after.calls} calls"
                         + (", recompile limit reached" if after.recompile_limit else "")
                         + ")")
        return found

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    @property
    def speedup(self) -> dict[str, float | None]:
        return {"eager": _ratio(self.before.eager_ms, self.after.eager_ms),
                "compiled": _ratio(self.before.compiled_ms, self.after.compiled_ms)}

    @property
    def noise(self) -> dict[str, float | None]:
        """Per mode, the original's relative distance from itself (None: not timed)."""
        out: dict[str, float | None] = {}
        for mode in ("eager", "compiled"):
            timing = self.before.eager if mode == "eager" else self.before.compiled
            control = self.control.get(mode)
            out[mode] = noise_band(timing, control) if timing and control else None
        return out

    @property
    def fastest_noise(self) -> dict[str, tuple[float | None, float | None]]:
        """Per mode: (before's fastest call / after's, the original's fastest call's
        relative distance from the control's)."""
        out: dict[str, tuple[float | None, float | None]] = {}
        for mode in ("eager", "compiled"):
            b = self.before.eager if mode == "eager" else self.before.compiled
            a = self.after.eager if mode == "eager" else self.after.compiled
            control = self.control.get(mode)
            ratio = _ratio(b.min_ms, a.min_ms) if b and a else None
            band = abs(b.min_ms / control.min_ms - 1.0) if b and control and control.min_ms > 0 \
                else None
            out[mode] = (ratio, band)
        return out

    @property
    def compile_noise(self) -> float | None:
        """The original's first compiled call against the control's (None: no control)."""
        b, c = self.before.compile_s, self.control_compile_s
        if b is None or c is None or c <= 0:
            return None
        return abs(b / c - 1.0)

    @property
    def within_noise(self) -> dict[str, bool | None]:
        """Per mode: the ratio is no further from 1 than the noise band (no claim)."""
        out: dict[str, bool | None] = {}
        for mode, ratio in self.speedup.items():
            band = self.noise[mode]
            out[mode] = None if ratio is None or band is None else abs(ratio - 1.0) <= band
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "entry": self.entry,
            "inputs": self.inputs,
            "after_file": self.after_file,
            "device": self.device,
            "device_name": self.device_name,
            "torch_version": self.torch_version,
            "python_version": self.python_version,
            "threads": self.threads,
            "load_average": self.load_average,
            "backend": self.backend,
            "trials": self.trials,
            "seed": self.seed,
            "repeat": self.repeat,
            "date": self.date,
            "notes": list(self.notes),
            "changed": self.changed,
            "fixes": list(self.fixes),
            "remaining_findings": list(self.remaining_findings),
            "tolerance": {"rtol": self.tolerance.rtol, "atol": self.tolerance.atol,
                          "text_exact": not self.tolerance.text_numbers,
                          "why": self.tolerance.why, "rules": list(self.tolerance_rules)},
            "before": self.before.as_dict(self.before_lines),
            "after": self.after.as_dict(self.after_lines),
            "equivalence": self.equivalence.as_dict(),
            "speedup": {k: _round(v) for k, v in self.speedup.items()},
            "noise_band": {k: _round(v) for k, v in self.noise.items()},
            "within_noise": self.within_noise,
            "control": {k: v.as_dict() for k, v in self.control.items()},
            "control_compile_s": _round(self.control_compile_s),
            "compile_noise_band": _round(self.compile_noise),
            "timed": self.timed,
            "allow_untaken": self.allow_untaken,
            "passed": self.passed,
            "problems": self.problems,
            "graph_break_notes": self.break_notes,
            "exit_code": self.exit_code,
        }


def _round(value: float | None, digits: int = 4) -> float | None:
    if value is None:
        return None
    return float(f"{value:.{digits}g}") if value else 0.0


def _fmt(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


def _bound(breaks: BreakReport) -> str:
    """A break count, with ">=" when it is a lower bound."""
    return f"{'>=' if breaks.lower_bound else ''}{breaks.graph_breaks}"


def _skips(breaks: BreakReport, lines: list[str]) -> str:
    sites = sorted({r.line for r in breaks.reasons if r.frame_skipped and r.line})
    return ", ".join(f"line {n}: {_line(lines, n)}" for n in sites) or "outside the file"


def _ratio(before: float | None, after: float | None) -> float | None:
    if before is None or after is None or after <= 0:
        return None
    return before / after


def _tie_values(value: Any) -> list[float]:
    """The value a threshold was compared with, and the floats just below and above it."""
    if value is None:
        return []
    try:
        number = float(value)
    except (TypeError, ValueError, RuntimeError):
        return []
    if not math.isfinite(number):
        return []
    single = torch.tensor(number, dtype=torch.float32)
    if float(single) == number:  # a float32 value: its float32 neighbours (a neighbour
        # between two float32 numbers would only test how float32 rounds the threshold)
        return [number] + [float(torch.nextafter(single, torch.tensor(direction)))
                           for direction in (-math.inf, math.inf)]
    return [number, math.nextafter(number, -math.inf), math.nextafter(number, math.inf)]


def _replaced_blocks(new: list[str], old: list[str]) -> dict[int, range]:
    """Lines of ``new`` that replace lines of ``old`` -> those lines of ``old``."""
    blocks: dict[int, range] = {}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace":
            blocks.update({j + 1: range(i1 + 1, i2 + 1) for j in range(j1, j2)})
    return blocks


def _line_map(new: list[str], old: list[str], equal_only: bool = False) -> dict[int, int]:
    """Line numbers of ``new`` -> the line of ``old`` they are or replace one for one
    (``equal_only``: only the lines left as they were)."""
    mapping: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (not equal_only and tag == "replace" and i2 - i1 == j2 - j1):
            mapping.update({j + 1: i1 + (j - j1) + 1 for j in range(j1, j2)})
    return mapping


def _line(lines: list[str], number: int) -> str | None:
    if 0 < number <= len(lines):
        return lines[number - 1].strip()
    return None


# -- the verification --------------------------------------------------------------------------


def resolve_device(device: str) -> tuple[str, str]:
    """("cpu" | "cuda", a description of the device); usage error when CUDA is missing."""
    if device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
        raise VerifyUsageError(f"unknown device {device!r}: use auto, cpu or cuda")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise VerifyUsageError("--device cuda: CUDA is not available on this machine")
        return device, torch.cuda.get_device_name(torch.device(device))
    return "cpu", f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def _read(path: Path, what: str) -> str:
    try:
        with tokenize.open(path) as handle:
            return handle.read()
    except FileNotFoundError:
        raise VerifyUsageError(f"{what} {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise VerifyUsageError(f"{what} {str(path)!r} is a directory") from None
    except (OSError, SyntaxError, UnicodeDecodeError) as error:
        raise VerifyUsageError(f"cannot read {what} {str(path)!r}: {error}") from None


def verify(
    file: str | os.PathLike[str],
    entry: str,
    *,
    inputs: str = "example_inputs",
    after: str | os.PathLike[str] | None = None,
    device: str = "auto",
    trials: int = 20,
    seed: int = 0,
    backend: str = "inductor",
    repeat: int = 10,
    warmup: int = 1,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    unsafe_fixes: bool = False,
    measure_breaks: bool = True,
    measure_time: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    threads: int | None = 1,
    compiled_trials: int = 3,
    rules: Iterable[str] | None = None,
    adversarial: bool = True,
    allow_untaken: bool = False,
    measure_memory: bool = True,
    search: int = adversarial_inputs.SEARCH_EXAMPLES,
) -> Report:
    """Verify the rewrite of ``file``: the fixer's output, or the file ``after``.

    ``entry`` names the function to run; ``inputs`` names a function of the file
    that takes a seed (and optionally ``device=``) and returns the arguments as a
    tuple or ``(args, kwargs)``. Raises :class:`VerifyUsageError` for requests
    that cannot be carried out (missing file or function, no CUDA, a file that
    the fixer cannot parse); everything the code under test does wrong is in the
    report instead. ``threads`` sets torch's intra-op threads for the run: one by
    default, which keeps timings steady on a busy machine (None: torch's choice).
    ``adversarial``: also compare the two versions on the inputs of
    :mod:`.adversarial` (NaN, ±inf, empty loops ...). A condition of the rewrite
    that the trials never drove both ways fails verification unless
    ``allow_untaken``. ``search``: after those, hypothesis tries up to this many
    combinations of the same changes (0: none) and shrinks a difference it finds.
    ``measure_memory``: follow tensor memory over repeated eager
    calls (see :mod:`.memory`); a rewrite that needs much more fails.
    """
    if trials < 1 or repeat < 1 or warmup < 0 or compiled_trials < 0:
        raise VerifyUsageError("trials and repeat must be at least 1, warmup and "
                               "compiled_trials at least 0")
    if search < 0:
        raise VerifyUsageError("search must be at least 0")
    if threads is not None and threads < 1:
        raise VerifyUsageError("threads must be at least 1")
    if backend not in BACKENDS:
        raise VerifyUsageError(f"unknown backend {backend!r}: use one of {', '.join(BACKENDS)}")
    path = Path(file)
    before_text = _read(path, "file")
    device, device_name = resolve_device(device)
    fixes: list[str] = []
    remaining: list[str] = []
    if after is None:
        after_text, fixes, remaining = _fixed(before_text, path, select, ignore, unsafe_fixes)
        after_name = f"{path.resolve()} (fixed)"
    else:
        after_text = _read(Path(after), "after-file")
        after_name = str(Path(after).resolve())
    if after is None:
        codes = [fix.split()[0] for fix in fixes]
    else:
        codes = [c.strip().upper() for c in rules or () if c.strip()]
    tolerance, tolerance_rules = tolerance_for(codes)
    before = Source("before", before_text, str(path.resolve()), str(file))
    rewritten = Source("after", after_text, after_name,
                       f"{file} (fixed)" if after is None else str(after))

    report = Report(
        file=str(file), entry=entry, inputs=inputs,
        after_file=None if after is None else str(after), device=device,
        device_name=device_name, backend=backend, trials=trials, seed=seed, repeat=repeat,
        before=VersionReport(before.filename), after=VersionReport(rewritten.filename),
        equivalence=Equivalence(), changed=after_text != before_text, fixes=fixes,
        remaining_findings=remaining, tolerance=tolerance, tolerance_rules=tolerance_rules,
        before_lines=before_text.splitlines(),
        after_lines=after_text.splitlines(), timed=measure_time, allow_untaken=allow_untaken)
    if device == "cpu":
        report.notes.append(CPU_NOTE)
    if not report.changed:
        report.notes.append("the rewritten file is identical to the original")

    package, import_root = package_of(path)
    if package:
        report.notes.append(f"run as a module of package {package} (from {import_root})")
    modules = LoadedModules(package)
    previous_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
        report.threads = threads
    with importable_from(str(import_root)):
        try:
            _Verification(report, before, rewritten, modules, entry, inputs, device, backend,
                          repeat, warmup, rtol, atol,
                          compiled_trials if measure_breaks or measure_time else 0,
                          adversarial=adversarial, codes=codes,
                          search_examples=search if adversarial else 0,
                          ).run(breaks=measure_breaks, timing=measure_time,
                                memory=measure_memory)
        finally:
            modules.close()
            torch._dynamo.reset()
            torch.set_num_threads(previous_threads)
    return report


def _fixed(text: str, path: Path, select: Iterable[str] | None, ignore: Iterable[str] | None,
           unsafe_fixes: bool) -> tuple[str, list[str], list[str]]:
    """What `nosync-fix FILE` would write (the project's [tool.nosync-fix] settings apply)."""
    from .. import ConfigError, fix_code
    from ..config import find_config, project_settings

    try:
        settings = project_settings(find_config(path.resolve().parent), [path])
        result = fix_code(text, filename=str(path), select=select, ignore=ignore,
                          unsafe_fixes=unsafe_fixes, settings=settings)
    except ConfigError as error:
        raise VerifyUsageError(str(error)) from None
    if result.error is not None:
        raise VerifyUsageError(f"the fixer cannot process {path}: {result.error.message}")
    fixes = [f"{f.code} line {f.line}" for f in result.applied]
    remaining = [f"{f.code} line {f.line}" + ("" if f.fix is None else " (unsafe fix)")
                 for f in result.findings]
    return result.fixed, fixes, remaining


@dataclass
class _Run:
    """One call of one version: everything needed to observe it afterwards."""

    module: types.ModuleType
    args: tuple
    kwargs: dict
    result: Any = None
    raised: Raised | None = None
    printed: Printed = field(default_factory=Printed)
    rng: dict[str, Any] = field(default_factory=dict)
    syncs: SyncCount = field(default_factory=SyncCount)
    retention: Retention = field(default_factory=Retention)


class _Verification:
    def __init__(self, report: Report, before: Source, after: Source, modules: LoadedModules,
                 entry: str, inputs: str, device: str, backend: str, repeat: int, warmup: int,
                 rtol: float | None, atol: float | None, compiled_trials: int = 0,
                 adversarial: bool = False, codes: Iterable[str] = (),
                 search_examples: int = 0) -> None:
        self.report = report
        self.before, self.after = before, after
        self.modules = modules
        self.entry, self.inputs = entry, inputs
        self.device, self.backend = device, backend
        self.repeat, self.warmup = repeat, warmup
        self.rtol, self.atol = rtol, atol
        self.compiled_trials = compiled_trials
        self.adversarial = adversarial
        self.search_examples = search_examples
        #: The rules the rewrite applies (some change what an exception looks like).
        self.codes = set(codes)

    # -- helpers ---------------------------------------------------------------------------

    def _load(self, source: Source, seed: int, **options: Any) -> tuple[types.ModuleType, Any,
                                                                        Any]:
        module = self.modules.load(source, seed, **options)
        entry = function(module, self.entry, "entry", source.name)
        inputs = function(module, self.inputs, "inputs", source.name)
        return module, entry, inputs

    def _prepared(self, source: Source, seed: int) -> tuple[Any, tuple, dict] | str:
        """A fresh module of ``source``, its entry and inputs for ``seed``, or why not."""
        try:
            _module, entry, inputs = self._load(source, seed)
            args, kwargs = make_inputs(inputs, seed, self.device, source.name)
        except Exception as error:
            return f"preparing failed: {type(error).__name__}: {_first_line(str(error))}"
        return entry, args, kwargs

    # -- phases ----------------------------------------------------------------------------

    def run(self, *, breaks: bool, timing: bool, memory: bool = True) -> None:
        base = self.report.seed
        try:
            self._load(self.before, base)
        except VerifyUsageError:
            raise
        except Exception as error:
            raise VerifyUsageError(f"{self.report.file} fails when imported: "
                                   f"{type(error).__name__}: {_first_line(str(error))}") from None
        try:
            self._load(self.after, base)
        except Exception as error:
            message = f"the rewritten file: {error}" if isinstance(error, VerifyUsageError) \
                else (f"the rewritten file fails when imported: {type(error).__name__}: "
                      f"{_first_line(str(error))}")
            self.report.equivalence.fatal = message
            self.report.after.load_error = message
            return
        self._equivalence()
        if memory:
            self._memory()
        if breaks or timing:
            self._compiled(timing)
        if timing:
            self._eager_timing()

    def _versions(self) -> list[tuple[Source, VersionReport]]:
        return [(self.before, self.report.before), (self.after, self.report.after)]

    def _equivalence(self) -> None:
        report = self.report
        equivalence = report.equivalence
        diff = changes(self.before.text, self.after.text)
        tree, probe = instrument(self.before.text, diff, self.before.filename)
        equivalence.branch_coverage = probe.conditions
        extra = {PROBE: probe, VALUE: probe.value}
        for trial in range(report.trials):
            seed = report.seed + trial
            old = self._call(self.before, seed, tree=tree, extra_globals=extra)
            try:
                new = self._call(self.after, seed)
            except Exception as error:  # the rewrite cannot even be prepared for this seed
                equivalence.trials += 1
                equivalence.failed_trials += 1
                if len(equivalence.failures) < MAX_FAILURES:
                    equivalence.failures.append(Failure(
                        trial, seed, "preparing the rewritten version",
                        f"{type(error).__name__}: {_first_line(str(error))}"))
                continue
            if old.raised is not None:
                equivalence.original_raised += 1
                equivalence.original_error = equivalence.original_error or (
                    f"{old.raised.type_name}: {_first_line(old.raised.message)}")
            report.before.syncs.add(old.syncs)
            report.after.syncs.add(new.syncs)
            report.before.retention.add(old.retention)
            report.after.retention.add(new.retention)
            comparison = self._compare(old, new)
            equivalence.trials += 1
            equivalence.max_abs_diff = max(equivalence.max_abs_diff, comparison.max_abs_diff)
            if comparison.differences:
                equivalence.failed_trials += 1
                room = MAX_FAILURES - len(equivalence.failures)
                equivalence.failures.extend(
                    Failure(trial, seed, d.path, d.detail)
                    for d in comparison.differences[:max(0, min(room, 5))])
            self._compare_warnings(old, new, equivalence)
            if trial < self.compiled_trials:
                self._compiled_trial(trial, seed, old)
        if self.adversarial:
            for trial in range(min(adversarial_inputs.SEEDS, report.trials)):
                for kind in adversarial_inputs.KINDS:
                    self._adversarial_trial(trial, report.seed + trial, kind, tree, extra)
            for condition in probe.conditions:
                for value in _tie_values(probe.values.get(condition.index)):
                    if condition.threshold:
                        self._adversarial_trial(0, report.seed, f"{condition.threshold} = "
                                                f"{value!r}", tree, extra,
                                                {condition.threshold: value})
            if self.search_examples:
                self._search(tree, extra, probe)
        for condition in probe.conditions:
            warning = condition.warning(report.trials, equivalence.adversarial_trials)
            if warning:
                equivalence.warnings.append(warning)

    def _search(self, tree: Any, extra: dict[str, Any], probe: Any) -> None:
        """Hypothesis looks for a combination of adversarial changes on which the two
        versions differ, and shrinks what it finds (see :func:`.adversarial.search`)."""
        equivalence = self.report.equivalence
        seed = self.report.seed
        try:
            _module, _entry, inputs = self._load(self.before, seed)
            args, kwargs = make_inputs(inputs, seed, self.device, self.before.name)
        except Exception:  # the seeded trials report it
            return
        tensor_names, list_names = adversarial_inputs.targets(args, kwargs)
        ties = {c.threshold: _tie_values(probe.values.get(c.index))
                for c in probe.conditions if c.threshold}
        changes = adversarial_inputs.strategy(len(tensor_names), len(list_names), ties)
        if changes is None:
            return

        def check(candidate: list[adversarial_inputs.Change]) -> str | None:
            try:
                old = self._call(self.before, seed, tree=tree, extra_globals=extra,
                                 changes=candidate)
            except NoAdversarialInput:
                return None
            try:
                new = self._call(self.after, seed, changes=candidate)
            except NoAdversarialInput:
                return None
            except Exception as error:
                return (f"preparing the rewritten version: {type(error).__name__}: "
                        f"{_first_line(str(error))}")
            differences = self._compare(old, new).differences
            return f"{differences[0].path}: {differences[0].detail}" if differences else None

        with dynamo_quiet():
            shrunk, difference, tried = adversarial_inputs.search(check, changes,
                                                                  self.search_examples)
        equivalence.search_tried = tried
        if shrunk is None or difference is None:
            return
        described = adversarial_inputs.describe(shrunk, tensor_names, list_names)
        equivalence.search_input = described
        equivalence.adversarial_failed += 1
        path, _, detail = difference.partition(": ")
        if len(equivalence.failures) < MAX_FAILURES:
            equivalence.failures.append(Failure(0, seed, path, detail,
                                                input=f"search (shrunk): {described}"))

    def _adversarial_trial(self, trial: int, seed: int, kind: str, tree: Any,
                           extra: dict[str, Any], overrides: dict[str, Any] | None = None,
                           ) -> None:
        """Both versions on the same adversarial input; a skipped kind changes nothing.
        With ``overrides`` (a threshold set to the value compared with it), the seed's own
        inputs are used and those module globals replaced in both versions."""
        equivalence = self.report.equivalence
        try:
            old = self._call(self.before, seed, tree=tree, extra_globals=extra,
                             adversarial=None if overrides else kind, overrides=overrides)
        except NoAdversarialInput:
            return
        try:
            new = self._call(self.after, seed, adversarial=None if overrides else kind,
                             overrides=overrides)
        except NoAdversarialInput:
            return
        except Exception as error:
            new = None
            differences = [("preparing the rewritten version",
                            f"{type(error).__name__}: {_first_line(str(error))}")]
        if new is not None:
            differences = [(d.path, d.detail) for d in self._compare(old, new).differences]
        equivalence.adversarial_trials += 1
        if differences:
            equivalence.adversarial_failed += 1
            room = MAX_FAILURES - len(equivalence.failures)
            equivalence.failures.extend(
                Failure(trial, seed, path, detail, input=kind)
                for path, detail in differences[:max(0, min(room, 5))])

    def _call(self, source: Source, seed: int, adversarial: str | None = None,
              overrides: dict[str, Any] | None = None,
              changes: list[adversarial_inputs.Change] | None = None,
              **options: Any) -> _Run:
        try:
            module, entry, inputs = self._load(source, seed, **options)
            if changes:
                args, kwargs = make_inputs(inputs, seed, self.device, source.name)
                args, kwargs, new_globals = adversarial_inputs.apply(args, kwargs, changes)
                overrides = {**(overrides or {}), **new_globals}
            if overrides:
                current = [module.__dict__.get(name) for name in overrides]
                if not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                           for v in current):
                    raise NoAdversarialInput("not a numeric module global")
                module.__dict__.update(overrides)
            if not changes:
                args, kwargs = make_inputs(inputs, seed, self.device, source.name,
                                           adversarial)
            if adversarial is not None and not adversarial_inputs.accepts_hint(inputs):
                args, kwargs, changed = adversarial_inputs.perturb(args, kwargs, adversarial)
                if not changed:
                    raise NoAdversarialInput(adversarial)
        except NoAdversarialInput:
            raise
        except Exception as error:
            if source is self.before and not isinstance(error, VerifyUsageError):
                raise VerifyUsageError(
                    f"{source.name}: preparing seed {seed} failed: "
                    f"{type(error).__name__}: {_first_line(str(error))}") from None
            raise
        run = _Run(module, args, kwargs)
        with quiet():  # what earlier uncaptured calls deferred must not land in this capture
            flush_deferred_output()
        seed_everything(seed)
        with captured() as printed, count_syncs(source.filename, self.device) as syncs, \
                watch_retention(source.filename) as retention:
            try:
                run.result = entry(*args, **kwargs)
            except Exception as error:
                run.raised = Raised(type(error).__name__, str(error))
            finally:
                try:
                    flush_deferred_output()
                except Exception as error:  # a broken flush is a difference, not a crash
                    print(f"[deferred output failed: {type(error).__name__}: {error}]",
                          file=sys.stderr)
        run.rng = rng_state(self.device)
        run.printed, run.syncs, run.retention = printed, syncs, retention
        return run

    def _call_compiled(self, source: Source, seed: int) -> _Run:
        """One call of ``source``'s entry compiled with the backend, on a fresh module."""
        module, entry, inputs = self._load(source, seed)
        args, kwargs = make_inputs(inputs, seed, self.device, source.name)
        run = _Run(module, args, kwargs)
        with quiet():
            flush_deferred_output()
        torch._dynamo.reset()
        compiled = torch.compile(entry, backend=self.backend)
        seed_everything(seed)
        with dynamo_quiet(), captured() as printed:
            try:
                run.result = compiled(*args, **kwargs)
            except Exception as error:
                run.raised = Raised(type(error).__name__, str(error))
            finally:
                try:
                    flush_deferred_output()
                except Exception as error:
                    print(f"[deferred output failed: {type(error).__name__}: {error}]",
                          file=sys.stderr)
        run.rng = rng_state(self.device)
        run.printed = printed
        return run

    def _compiled_trial(self, trial: int, seed: int, eager_original: _Run) -> None:
        """The compiled rewrite against the eager original and the compiled original."""
        equivalence = self.report.equivalence
        equivalence.compiled_trials += 1
        try:
            compiled_original = self._call_compiled(self.before, seed)
            compiled_rewrite = self._call_compiled(self.after, seed)
        except Exception as error:
            equivalence.compiled_failed += 1
            equivalence.failures.append(Failure(
                trial, seed, "compiled: preparing",
                f"{type(error).__name__}: {_first_line(str(error))}"))
            return
        finally:
            torch._dynamo.reset()
        against_eager = self._compare(eager_original, compiled_rewrite, compiled=True)
        against_compiled = self._compare(compiled_original, compiled_rewrite, compiled=True)
        differs_compiled = {d.path for d in against_compiled.differences}
        wrong = [d for d in against_eager.differences if d.path in differs_compiled]
        if wrong:
            equivalence.compiled_failed += 1
            room = MAX_FAILURES - len(equivalence.failures)
            equivalence.failures.extend(
                Failure(trial, seed, f"compiled: {d.path}", d.detail)
                for d in wrong[:max(0, min(room, 5))])

    def _compare(self, old: _Run, new: _Run, *, compiled: bool = False) -> Comparison:
        """Differences between two runs. Eager runs are held to the rules' tolerance;
        compiled ones to torch.testing's dtype tolerances for values (the compiler
        reorders float arithmetic) and to the rules' for printed text."""
        shared = sorted(set(_state_globals(old.module)) & set(_state_globals(new.module)))
        observations = []
        for run in (old, new):
            raised = run.raised
            if (run is new and "NSY401" in self.codes and old.raised is not None
                    and raised is not None and old.raised.type_name == "AssertionError"
                    and raised.type_name == "RuntimeError"):
                # NSY401's torch._assert_async raises RuntimeError with the same message
                # where the assert raised AssertionError (its page says so).
                raised = Raised("AssertionError", raised.message)
            observer = Observer(run.module.__name__)
            observer.add("args", run.args)
            if run.kwargs:
                observer.add("kwargs", run.kwargs)
            if raised is not None:
                observer.leaves["raised"] = raised
            else:
                observer.add("result", run.result)
            for name in shared:
                observer.add(f"globals.{name}", run.module.__dict__[name])
            observer.leaves.update(run.rng)
            observations.append(Observation(observer.leaves, run.printed.stdout,
                                            run.printed.stderr))
        tolerance = self.report.tolerance
        rtol, atol = self.rtol, self.atol
        if rtol is None and atol is None and not compiled:
            rtol, atol = tolerance.rtol, tolerance.atol
        return compare(observations[0], observations[1], rtol=rtol, atol=atol, text=tolerance)

    @staticmethod
    def _compare_warnings(old: _Run, new: _Run, equivalence: Equivalence) -> None:
        extra = Counter(new.printed.warnings) - Counter(old.printed.warnings)
        for text in extra:
            warning = f"the rewritten code warns: {text}"
            if warning not in equivalence.warnings:
                equivalence.warnings.append(warning)

    def _eager_timing(self) -> None:
        calls = []
        versions = [*self._versions(), (self.before, None)]  # the last: the control
        for source, version in versions:
            prepared = self._prepared(source, self.report.seed)
            if isinstance(prepared, str):
                if version is not None:
                    version.eager_error = prepared
                return
            entry, args, kwargs = prepared
            timed = self._timed(entry, args, kwargs)
            try:
                timed.call()  # the first call is never timed
            except Exception as error:
                if version is not None:
                    version.eager_error = f"{type(error).__name__}: {_first_line(str(error))}"
                return
            calls.append(timed)
        before, after, control = time_group(calls, repeats=self.repeat, warmup=self.warmup,
                                            device=self.device)
        self.report.before.eager, self.report.after.eager = before, after
        self.report.control["eager"] = control

    def _compiled(self, timing: bool) -> None:
        """Graphs and breaks from the first compiled call of each version, recompiles over
        the repeated calls, then its time."""
        _warm_up_compiler(self.backend)
        if timing:
            # The original compiled once and thrown away: what the first compile of a
            # program pays once (the backend's first use of its operators, lazy imports)
            # must not land on the version compiled first (measured on gated_forward.py:
            # 1.22 s for the original, 0.48 s for the same file compiled next, without it).
            prepared = self._prepared(self.before, self.report.seed)
            if not isinstance(prepared, str):
                with _fresh_compiler(), dynamo_quiet(), quiet():
                    try:
                        torch.compile(prepared[0], backend=self.backend)(*prepared[1],
                                                                         **prepared[2])
                    except Exception:  # the measured compile reports it
                        pass
        compiled = []
        for source, version in self._versions():
            prepared = self._prepared(source, self.report.seed)
            if isinstance(prepared, str):
                version.compile_error = version.breaks.error = prepared
                return
            entry, args, kwargs = prepared
            with _fresh_compiler():
                observed = compile_and_observe(entry, args, kwargs, source.filename,
                                               self.backend, self._now)
                version.breaks = observed.breaks
                version.compile_s = observed.first_call_s
                version.compile_error = observed.breaks.error
                if observed.breaks.error is None:
                    version.repeats = repeat_calls(observed, args, kwargs, REPEATS)
            compiled.append((observed, self._timed(observed.function, args, kwargs)))
        if any(version.breaks.lower_bound for _, version in self._versions()) and not any(
                observed.breaks.error for observed, _ in compiled):
            # Loop bodies as functions first; where dynamo fails on that copy of either
            # version (it crashed on an f-string of a closure variable), both are counted
            # on the file itself, loops resumed: the two counts are always made alike.
            for split in (True, False):
                counts = [self._all_breaks(source, split) for source, _ in self._versions()]
                if not any(count.error for count in counts):
                    break
            self.report.before.all_breaks, self.report.after.all_breaks = counts
        if not timing or any(observed.breaks.error for observed, _ in compiled):
            return
        prepared = self._prepared(self.before, self.report.seed)  # the control
        if isinstance(prepared, str):
            return
        entry, args, kwargs = prepared
        with _fresh_compiler():
            control = compile_and_observe(entry, args, kwargs, self.before.filename,
                                          self.backend, self._now)
        if control.breaks.error:
            return
        self.report.control_compile_s = control.first_call_s
        calls = [timed for _, timed in compiled] + [self._timed(control.function, args, kwargs)]
        with dynamo_quiet():
            try:
                *timings, self.report.control["compiled"] = time_group(
                    calls, repeats=self.repeat, warmup=self.warmup, device=self.device)
            except Exception as error:  # a recompilation that fails, for instance
                message = f"{type(error).__name__}: {_first_line(str(error))}"
                self.report.before.compile_error = self.report.after.compile_error = message
                return
        self.report.before.compiled, self.report.after.compiled = timings

    def _memory(self) -> None:
        """Each version: a warm-up call, then tensor memory over repeated calls."""
        for source, version in self._versions():
            prepared = self._prepared(source, self.report.seed)
            if isinstance(prepared, str):
                version.memory = MemoryReport(error=prepared)
                continue
            entry, args, kwargs = prepared

            def call(entry: Any = entry, args: tuple = args, kwargs: dict = kwargs) -> None:
                with quiet():
                    entry(*args, **kwargs)

            def finish() -> None:
                with quiet():
                    flush_deferred_output()
            seed_everything(self.report.seed)
            try:
                call()
                finish()
            except Exception as error:
                version.memory = MemoryReport(
                    error=f"{type(error).__name__}: {_first_line(str(error))}")
                continue
            version.memory = measure_memory_of(call, finish, self.device)

    def _all_breaks(self, source: Source, split_bodies: bool = True) -> BreakReport:
        """Every break of one version (see :func:`.breaks.count_all_breaks`), on a fresh
        module made from the copy whose loop bodies are functions (or from the file
        itself: ``split_bodies`` false)."""
        try:
            tree, split = split_loop_bodies(source.text, source.filename, source.label) \
                if split_bodies else (None, 0)
            module = self.modules.load(source, self.report.seed, tree=tree)
            entry = function(module, self.entry, "entry", source.name)
            inputs = function(module, self.inputs, "inputs", source.name)
            args, kwargs = make_inputs(inputs, self.report.seed, self.device, source.name)
        except Exception as error:
            return BreakReport(error=f"counting every break: preparing failed: "
                                     f"{type(error).__name__}: {_first_line(str(error))}",
                               method="all")
        with _fresh_compiler(), quiet():
            try:
                return count_all_breaks(entry, args, kwargs, source.filename, split,
                                        self._now)
            finally:
                torch._dynamo.reset()

    def _timed(self, function: Any, args: tuple, kwargs: dict) -> Timed:
        seed = self.report.seed
        return Timed(_quiet_call(function, args, kwargs), roots=(args, kwargs),
                     reseed=lambda: seed_everything(seed))

    def _now(self) -> float:
        if self.device.startswith("cuda"):
            torch.cuda.synchronize()
        return time.perf_counter()


def _warm_up_compiler(backend: str) -> None:
    """Compile something trivial once, so that neither version pays for importing and
    starting the compiler (the first version compiled used to: 3.08 s against 0.36 s on
    identical code)."""
    torch._dynamo.reset()
    with _fresh_compiler(), dynamo_quiet(), quiet():
        try:
            torch.compile(lambda x: x * 2 + 1, backend=backend)(torch.ones(2))
        except Exception:  # the real compile will report it
            pass


@contextlib.contextmanager
def _fresh_compiler() -> Iterator[None]:
    """A clean dynamo and no inductor cache hits: each version compiles from scratch."""
    torch._dynamo.reset()
    import torch._inductor.config as inductor_config

    saved = inductor_config.force_disable_caches
    inductor_config.force_disable_caches = True
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*force_disable_caches")
            yield
    finally:
        inductor_config.force_disable_caches = saved


def _quiet_call(entry: Any, args: tuple, kwargs: dict) -> Any:
    def call() -> None:
        with quiet():
            entry(*args, **kwargs)
            flush_deferred_output()
    return call




def _first_line(text: str) -> str:
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else ""


def _state_globals(module: types.ModuleType) -> list[str]:
    """Names of the module's globals that hold state (not code, not imported modules)."""
    names = []
    for name, value in module.__dict__.items():
        if name.startswith("__") or name == PROBE:
            continue
        if isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                              type)):
            continue
        names.append(name)
    return names
