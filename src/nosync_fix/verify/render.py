"""The verifier's report as text: a table, then the details a performance engineer asks for."""

from __future__ import annotations

from collections import Counter

from .breaks import REPEATS, BreakReport
from .core import Report, VersionReport
from .memory import CALLS, size


def _num(value: float | int | None, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return f"{value:.{digits}f}"


def milliseconds(value: float) -> str:
    """Three significant digits at most, never an exponent."""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _ms(version: VersionReport, compiled: bool) -> str:
    timing = version.compiled if compiled else version.eager
    error = version.compile_error if compiled else version.eager_error
    if timing is None:
        return "failed" if error else "-"
    return f"{milliseconds(timing.median_ms)} ±{milliseconds(timing.iqr_ms / 2)}"


def _fastest(version: VersionReport, compiled: bool) -> str:
    """The minimum: on a busy machine it moves least with other processes' time slices."""
    timing = version.compiled if compiled else version.eager
    return "-" if timing is None else milliseconds(timing.min_ms)


def _change(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return ""
    delta = after - before
    return "0" if abs(delta) < 1e-9 else f"{delta:+g}" if float(delta).is_integer() \
        else f"{delta:+.2f}"


def _speedup(ratio: float | None, band: float | None = None) -> str:
    """The ratio with the noise band beside it; no ratio when the band is wider than the
    effect (the original differed from itself by more than the rewrite from the original)."""
    if ratio is None:
        return ""
    noise = "" if band is None else f" (noise ±{band * 100:.0f}%)"
    if band is not None and abs(ratio - 1.0) <= band:
        return f"within noise: {abs(ratio - 1) * 100:.0f}% effect, ±{band * 100:.0f}% band"
    if ratio >= 1:
        return f"{ratio:.2f}x faster{noise}"
    return f"{1 / ratio:.2f}x slower{noise}"


def _ratio(before: float | None, after: float | None) -> float | None:
    return before / after if before is not None and after else None


def _breaks_count(version: VersionReport, every: bool = False) -> str:
    """The count, with ">=" when dynamo skipped a frame (later breaks were not seen).
    ``every``: the count of every break (loops resumed), where it was made."""
    breaks = version.all_breaks if every else version.breaks
    if breaks is None:
        return "-"
    if breaks.graph_breaks is None:
        return "failed" if breaks.error else "-"
    count = _num(breaks.graph_breaks)
    return f">={count}" if breaks.lower_bound else count


def _every_change(b: VersionReport, a: VersionReport) -> str:
    old, new = b.all_breaks, a.all_breaks
    if old is None or new is None or old.graph_breaks is None or new.graph_breaks is None:
        return ""
    change = _change(old.graph_breaks, new.graph_breaks)
    return change + (" (lower bound)" if old.lower_bound or new.lower_bound else "")


def _memory_rows(b: VersionReport, a: VersionReport) -> list[tuple[str, str, str, str]]:
    if b.memory is None and a.memory is None:
        return []
    calls = (b.memory or a.memory).calls or CALLS  # type: ignore[union-attr]

    def value(version: VersionReport, what: str) -> str:
        memory = version.memory
        if memory is None:
            return "-"
        if memory.error:
            return "failed"
        return size(memory.peak_bytes if what == "peak" else memory.kept_bytes)

    def change(what: str) -> str:
        old, new = b.memory, a.memory
        if old is None or new is None or old.error or new.error:
            return ""
        x, y = (old.peak_bytes, new.peak_bytes) if what == "peak" else \
            (old.kept_bytes, new.kept_bytes)
        if x is None or y is None:
            return ""
        if x == y:
            return "0"
        ratio = f", {y / x:.2f}x" if x > 0 and y >= 0 else ""
        return ("+" if y > x else "-") + size(abs(y - x)) + ratio

    return [(f"peak memory over {calls} calls", value(b, "peak"), value(a, "peak"),
             change("peak")),
            ("  left allocated after them", value(b, "kept"), value(a, "kept"),
             change("kept"))]


def _calls(version: VersionReport, what: str) -> str:
    repeats = version.repeats
    if repeats is None:
        return "-"
    if repeats.error:
        return "failed"
    value = repeats.recompiles if what == "recompiles" else repeats.eager_calls
    limit = " (limit)" if what == "eager" and repeats.recompile_limit else ""
    return f"{value}/{repeats.calls}{limit}"


def table(report: Report) -> list[str]:
    """The comparison table (also used for examples/REPORT.md)."""
    b, a = report.before, report.after
    speedup = report.speedup
    calls = (b.repeats or a.repeats).calls if (b.repeats or a.repeats) else REPEATS
    reads = "syncs / call" if report.device != "cpu" else "host reads / call"
    rows = [
        ("", "before", "after", "change"),
        ("graphs", _num(b.graph_count), _num(a.graph_count),
         _change(b.graph_count, a.graph_count)),
        ("graph breaks", _breaks_count(b), _breaks_count(a),
         _change(b.graph_breaks, a.graph_breaks)
         + (" (lower bound)" if b.breaks.lower_bound or a.breaks.lower_bound else "")),
        ("  frames skipped", _num(b.breaks.frames_skipped if b.graph_breaks is not None
                                  else None),
         _num(a.breaks.frames_skipped if a.graph_breaks is not None else None), ""),
        *([("  every break (loops resumed)", _breaks_count(b, True), _breaks_count(a, True),
            _every_change(b, a))] if b.all_breaks or a.all_breaks else []),
        (reads, _num(b.syncs_per_call), _num(a.syncs_per_call),
         _change(b.syncs_per_call, a.syncs_per_call)),
        ("graph kept after backward / call",
         _num(b.retention.per_call if b.retention.calls else None),
         _num(a.retention.per_call if a.retention.calls else None),
         _change(b.retention.per_call if b.retention.calls else None,
                 a.retention.per_call if a.retention.calls else None)),
        *_memory_rows(b, a),
        ("eager ms", _ms(b, False), _ms(a, False),
         _speedup(speedup["eager"], report.noise["eager"])),
        ("  fastest call", _fastest(b, False), _fastest(a, False),
         _speedup(*report.fastest_noise["eager"])),
        (f"compiled ms ({report.backend})", _ms(b, True), _ms(a, True),
         _speedup(speedup["compiled"], report.noise["compiled"])),
        ("  fastest call", _fastest(b, True), _fastest(a, True),
         _speedup(*report.fastest_noise["compiled"])),
        ("first compiled call s", _num(b.compile_s), _num(a.compile_s),
         _speedup(_ratio(b.compile_s, a.compile_s), report.compile_noise)
         if report.control_compile_s is not None else
         ("(no control: no noise band)" if b.compile_s is not None else "")),
        (f"recompiles over {calls} calls", _calls(b, "recompiles"), _calls(a, "recompiles"),
         _change(b.recompiles, a.recompiles)),
        ("  calls run eagerly", _calls(b, "eager"), _calls(a, "eager"),
         _change(b.eager_calls, a.eager_calls)),
    ]
    if report.device != "cpu":
        rows.insert(6, ("cuda sync warnings / call",
                        _num(b.syncs.cuda_sync_warnings / b.syncs.calls if b.syncs.calls
                             else None),
                        _num(a.syncs.cuda_sync_warnings / a.syncs.calls if a.syncs.calls
                             else None), ""))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for row in rows:
        lines.append(f"{row[0]:<{widths[0]}}  {row[1]:>{widths[1]}}  {row[2]:>{widths[2]}}  "
                     f"{row[3]}".rstrip())
    return lines


def _equivalence_line(report: Report) -> str:
    eq = report.equivalence
    if eq.fatal:
        return f"equivalence: FAILED: {eq.fatal}"
    if eq.vacuous:
        return f"equivalence: NOT TESTED: the original raised on all {eq.trials} trials"
    compiled = (f", {eq.compiled_trials} also compiled ({report.backend}) against the eager "
                f"original" if eq.compiled_trials else ", not compared compiled")
    if eq.adversarial_trials:
        compiled += f", {eq.adversarial_trials} adversarial inputs"
    if eq.search_tried:
        compiled += f", {eq.search_tried} searched by hypothesis"
    if eq.passed:
        return (f"equivalence: passed ({eq.trials} trials{compiled}, max abs diff "
                f"{eq.max_abs_diff:.3g})")
    failed = f"{eq.failed_trials} of {eq.trials} trials"
    if eq.compiled_failed:
        failed += f" and {eq.compiled_failed} of {eq.compiled_trials} compiled trials"
    if eq.adversarial_failed:
        failed += f" and {eq.adversarial_failed} of {eq.adversarial_trials} adversarial inputs"
    return f"equivalence: FAILED in {failed} (max abs diff {eq.max_abs_diff:.3g})"


def _every(breaks: BreakReport, label: str, lines: list[str]) -> list[str]:
    """The count of every break, what it is and how far it goes."""
    if breaks.error:
        return [f"every graph break {label}: not counted: {breaks.error}"]
    bodies = f"{breaks.loops_split} loop bod" + ("y" if breaks.loops_split == 1 else "ies")
    how = {"all": f"counted again with dynamo resuming inside loops and {bodies} traced as "
                  "functions of their own",
           "all, loop bodies not split": "counted again with dynamo resuming inside loops (on "
                                         "the file itself: dynamo failed on the copy whose loop "
                                         "bodies are functions)"}.get(
        breaks.method, f"counted again with {bodies} traced as functions (this torch cannot "
                       "resume inside loops)")
    if breaks.lower_bound:
        head = (f"every graph break {label}: >={breaks.graph_breaks}, {how}; still a lower "
                f"bound: dynamo gave up on {breaks.frames_skipped} frame(s) even so")
    else:
        head = f"every graph break {label}: {breaks.graph_breaks}, {how}"
    return [head, *_breaks(breaks, lines)]


def _breaks(breaks: BreakReport, lines: list[str]) -> list[str]:
    grouped = Counter((r.line, r.reason, r.location, r.frame_skipped, r.counted)
                      for r in breaks.reasons)
    out = []
    for (line, reason, location, skipped, counted), n in sorted(grouped.items(),
                                                                 key=lambda kv: kv[0][0]):
        where = f"line {line}" if line else "(outside the file)"
        extra = []
        if location:
            extra.append(f"in {location}")
        if skipped:
            extra.append("frame skipped: runs in eager mode")
        if not counted:
            extra.append("not a break of its own: dynamo could not go on after one")
        if n > 1:
            extra.append(f"x{n}")
        suffix = f" ({', '.join(extra)})" if extra else ""
        source = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        out.append(f"  {where}: {reason}{suffix}")
        if source:
            out.append(f"      {source}")
    return out


def _sites(version: VersionReport, lines: list[str]) -> list[str]:
    calls = version.syncs.calls or 1
    out = []
    for (line, kind), n in sorted(version.syncs.by_site.items()):
        where = f"line {line}" if line else "(outside the file)"
        source = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        out.append(f"  {where}: {kind} x{_num(n / calls)}" + (f"   {source}" if source else ""))
    return out


def render(report: Report) -> str:
    """The whole report as text for the terminal."""
    out = [f"nosync-verify {report.file} --entry {report.entry}"
           + (f" --after {report.after_file}" if report.after_file else "")]
    load = f", load average {report.load_average:g}" if report.load_average is not None else ""
    out.append(f"device {report.device} ({report.device_name}, {report.threads} torch "
               f"threads{load}), torch "
               f"{report.torch_version}, backend {report.backend}, {report.trials} trials, "
               + (f"{report.repeat} repeats" if report.timed else "no timing"))
    for note in report.notes:
        out.append(note)
    if report.fixes:
        out.append("fixes applied: " + ", ".join(report.fixes))
    tol = report.tolerance
    if tol.exact:
        out.append("tolerance: exact (values and printed text)")
    else:
        out.append(f"tolerance: rtol {tol.rtol:g}, atol {tol.atol:g}, printed numbers alike "
                   f"({', '.join(report.tolerance_rules) or 'given'}: {tol.why})")
    if report.remaining_findings:
        out.append("findings left: " + ", ".join(report.remaining_findings))
    out.append("")
    out.extend(table(report))
    out.append("")
    out.append(_equivalence_line(report))
    eq = report.equivalence
    for failure in eq.failures:
        given = f", adversarial input: {failure.input}" if failure.input else ""
        out.append(f"  trial {failure.trial} (seed {failure.seed}{given}): {failure.path}: "
                   f"{failure.detail}")
    if eq.failed_trials and len(eq.failures) >= 20:
        out.append("  (more failures not listed)")
    if eq.search_input:
        out.append(f"  shrunk failing input (hypothesis, {eq.search_tried} inputs tried): "
                   f"{eq.search_input}")
    if eq.branch_coverage:
        out.append("branch coverage of the rewritten conditions:")
        for c in sorted(eq.branch_coverage, key=lambda c: c.line):
            mark = "both ways" if c.both_ways else "NOT both ways"
            out.append(f"  line {c.line} ({c.why}): `{c.text}` true {c.true}, "
                       f"false {c.false}: {mark}")
    for label, version, lines in (("before", report.before, report.before_lines),
                                  ("after", report.after, report.after_lines)):
        if version.breaks.error:
            out.append(f"graph breaks {label}: not measured: {version.breaks.error}")
        elif version.breaks.lower_bound:
            out.append(f"graph breaks {label}: a lower bound: dynamo skipped "
                       f"{version.breaks.frames_skipped} frame(s) ({version.breaks.frames_ok} of "
                       f"{version.breaks.frames_total} converted) and did not look past the "
                       "break that stopped it")
            out.extend(_breaks(version.breaks, lines))
        elif version.breaks.reasons:
            out.append(f"graph breaks {label}:")
            out.extend(_breaks(version.breaks, lines))
        every = version.all_breaks
        if every is not None:
            out.extend(_every(every, label, lines))
        if version.syncs.by_site:
            out.append(f"host reads {label} (per call):")
            out.extend(_sites(version, lines))
        repeats = version.repeats
        memory = version.memory
        if memory is not None and not memory.error:
            out.append(f"memory {label}: {memory.method}, a warm-up call then {memory.calls} "
                       "calls, deferred output flushed at the end")
        for what, error in (("memory measurement", memory.error if memory else None),
                            ("import", version.load_error), ("eager run", version.eager_error),
                            ("compile", version.compile_error),
                            ("repeated compiled call", repeats.error if repeats else None)):
            if error:
                out.append(f"{what} failed {label}: {error}")
    notes = report.break_notes
    if notes:
        out.append("graph break counts:")
        out.extend(f"  {n}" for n in notes)
    timing_warnings = [
        f"{mode} time: the original differs from itself by {band * 100:.0f}%, more than "
        f"the rewrite differs from it: no speed claim"
        for mode, band in report.noise.items()
        if band is not None and report.within_noise[mode]]
    if eq.warnings or timing_warnings:
        out.append("warnings:")
        out.extend(f"  {w}" for w in [*eq.warnings, *timing_warnings])
    out.append("")
    if report.passed:
        out.append("result: PASS (same behaviour, no more graph breaks, no more syncs, "
                   "memory within bounds)")
    else:
        out.append("result: FAIL: " + "; ".join(report.problems))
    return "\n".join(out)
