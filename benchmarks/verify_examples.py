"""Verify every example under examples/ and write examples/REPORT.md.

    python benchmarks/verify_examples.py                  # CPU, inductor
    python benchmarks/verify_examples.py --device cuda    # the same on a GPU
    python benchmarks/verify_examples.py --unsafe-fixes   # unsafe fixes too: REPORT-unsafe.md

Each example names its entry in its docstring (``nosync-verify examples/x.py
--entry NAME``); the fixer's output for it (safe fixes, as `nosync-fix` applies
them) is verified against the original: graph breaks, host syncs, equivalence
over --trials seeds, and time over --repeat calls. Exit status 0 when every
example passed.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

_ENTRY = re.compile(r"nosync-verify examples/(?P<file>[\w/]+\.py) --entry (?P<entry>\w+)")


def examples(folder: Path = ROOT / "examples") -> list[tuple[Path, str]]:
    """(file, entry) for every example, as its docstring states."""
    found = []
    for path in sorted(folder.glob("*.py")):
        match = _ENTRY.search(path.read_text(encoding="utf-8"))
        if match is None:
            raise SystemExit(f"{path}: the docstring names no entry "
                             "('nosync-verify examples/NAME.py --entry FUNCTION')")
        found.append((path, match["entry"]))
    return found


def _arrow(before: object, after: object) -> str:
    def text(value: object) -> str:
        if value is None:
            return "-"
        if isinstance(value, float):
            return f"{value:g}" if value.is_integer() else f"{value:.3g}"
        return str(value)
    return f"{text(before)} → {text(after)}"


def _timing(report, mode: str) -> str:
    """before → after ms, the ratio with the noise band (the original against itself), or
    no ratio where the band is wider than the effect."""
    from nosync_fix.verify.render import milliseconds

    b = report.before.eager_ms if mode == "eager" else report.before.compiled_ms
    a = report.after.eager_ms if mode == "eager" else report.after.compiled_ms
    if b is None or a is None:
        return "-"
    ratio, band = report.speedup[mode], report.noise[mode]
    text = f"{milliseconds(b)} → {milliseconds(a)}"
    if ratio is None:
        return text
    if band is None:
        return f"{text} ({ratio:.2f}x, no noise band)"
    if abs(ratio - 1.0) <= band:
        return f"{text} (within noise ±{band * 100:.0f}%)"
    return f"{text} ({ratio:.2f}x, noise ±{band * 100:.0f}%)"


def _count(breaks) -> str:
    if breaks is None or breaks.graph_breaks is None:
        return "-"
    return f"{'≥' if breaks.lower_bound else ''}{breaks.graph_breaks}"


def _graph_breaks(report) -> str:
    """dynamo's counts, and every break where dynamo skipped a frame (≥: a lower bound)."""
    b, a = report.before, report.after
    text = f"{_count(b.breaks)} → {_count(a.breaks)}"
    if b.all_breaks is not None or a.all_breaks is not None:
        text += f"; every break: {_count(b.all_breaks)} → {_count(a.all_breaks)}"
    return text


def _memory(report) -> str:
    from nosync_fix.verify.memory import size

    b, a = report.before.memory, report.after.memory
    if b is None or a is None or b.error or a.error:
        return "-"
    return f"{size(b.peak_bytes)} → {size(a.peak_bytes)}"


def _skipped_frames(reports: list) -> list[str]:
    """What the ≥ marks mean, for the examples that have them."""
    marked = [r for r in reports if r.before.breaks.lower_bound or r.after.breaks.lower_bound]
    if not marked:
        return []
    lines = ["", "**Graph breaks marked ≥ are lower bounds.** Dynamo skips a frame at a graph "
             "break inside a loop (or where it cannot resume) and runs it eagerly, so it never "
             "sees the breaks after that one. Where that happens to either version, the "
             "verifier counts again on a copy of the file whose loop bodies are functions of "
             "their own, with dynamo allowed to resume inside loops (\"every break\"); a count "
             "still marked ≥ is one where dynamo gave up on a frame even so. The verdict "
             "compares those counts; where dynamo still skips the rewritten frame, the break it "
             "skips at must be one the original has on a line the rewrite left as it was, and "
             "the rewrite must remove a break (else it only moved the skip)."]
    for r in marked:
        notes = r.break_notes
        if notes:
            lines += ["", f"- {Path(r.file).name}: " + "; ".join(notes) + "."]
    return lines


def _noise(reports: list) -> list[str]:
    """The speed-ups the controls (unchanged files) show: the noise band of this run."""
    controls = [r for r in reports if not r.changed]
    if not controls:
        return []
    bands = []
    for mode in ("eager", "compiled"):
        ratios = [r.speedup[mode] for r in controls if r.speedup[mode] is not None]
        if ratios:
            bands.append(f"{min(ratios):.2f}x to {max(ratios):.2f}x {mode}")
    if not bands:
        return []
    return ["", f"**Noise in this run:** the {len(controls)} controls measured speed-ups of "
            f"{' and '.join(bands)} for identical code; a speed-up inside that band is not a "
            "measured effect of the rewrite."]


def write_report(reports: list, output: Path, command: str, seconds: float,
                 unsafe_fixes: bool = False) -> None:
    from nosync_fix.verify.render import render, table

    first = reports[0]
    lines = [
        "# nosync-verify on the examples",
        "",
        f"Generated by `{command}` on {first.date[:10]} in {seconds:.0f} s.",
        "",
        f"- device: **{first.device}** ({first.device_name})",
        f"- torch {first.torch_version}, Python {first.python_version}, torch threads: "
        f"{first.threads}, machine load average at start: {first.load_average}",
        "- each timed call starts from the state left by the warm-up (parameters, optimizer "
        "state and tensor arguments put back in place, generators reseeded), without garbage "
        "collection inside the timed region; the two versions' calls alternate",
        f"- backend `{first.backend}`, {first.trials} trial seeds per example, "
        f"{first.repeat} timed calls per version and mode (medians; ± is half the "
        "interquartile range)",
        "- the rewrite verified is the fixer's output with "
        + ("its safe and unsafe fixes (`--unsafe-fixes`)" if unsafe_fixes
           else "its default (safe) fixes"),
    ]
    if first.device == "cpu":
        lines += ["", "**CPU: no device queue, sync cost not represented.** On a CPU a host read "
                  "does not wait for queued device work, so the times below show only the cost "
                  "of the rewritten code itself (and, compiled, of fewer graph breaks); the "
                  "wait a sync costs on an accelerator is absent. Host reads are counted all "
                  "the same: they are the syncs the code would make on a GPU."]
    lines += ["", "Counts (graph breaks, host reads, recompiles) and memory bytes are exact: the "
              "same code gives the same figures on every run (≥ marks a count that is a lower "
              "bound, see below). Every time carries its noise band: how far the original, "
              "timed a second time beside itself, moved (a ratio inside the band is printed "
              "as \"within noise\", not as a speed-up)."]
    lines += ["", "| example | entry | fixes | graph breaks | host reads / call "
              "| peak memory (3 calls) | eager ms | compiled ms | equivalence | result |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for report in reports:
        eq = report.equivalence
        lines.append(
            f"| {Path(report.file).name} | `{report.entry}` | {len(report.fixes)} "
            f"| {_graph_breaks(report)} "
            f"| {_arrow(report.before.syncs_per_call, report.after.syncs_per_call)} "
            f"| {_memory(report)} "
            f"| {_timing(report, 'eager')} "
            f"| {_timing(report, 'compiled')} "
            f"| {'passed' if eq.passed else 'FAILED'} ({eq.trials}) "
            f"| {'PASS' if report.passed else 'FAIL'} |")
    lines += ["", "Speed-ups are before / after: above 1 the rewrite is faster. An example whose "
              "file the fixes leave unchanged is verified against itself, a control: equal "
              "counts, and times that differ only by noise."]
    lines += _skipped_frames(reports) + _noise(reports) + [""]
    for report in reports:
        lines += [f"## {Path(report.file).name}", "", "```text", *table(report), "```", ""]
        details = render(report).split("\n")
        start = next((i for i, line in enumerate(details) if line.startswith("equivalence:")),
                     len(details))
        lines += ["```text", *details[start:], "```", ""]
    output.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--backend", default="inductor", choices=["inductor", "aot_eager",
                                                                  "eager"])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch intra-op threads [default: torch's choice]")
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="Also apply the fixes marked unsafe.")
    parser.add_argument("--output", type=Path, default=None,
                        help="[default: examples/REPORT.md, or REPORT-unsafe.md]")
    parser.add_argument("--only", metavar="NAME", help="Verify only examples whose file "
                        "name contains NAME (no report is written).")
    args = parser.parse_args(argv)
    if args.output is None:
        name = "REPORT-unsafe.md" if args.unsafe_fixes else "REPORT.md"
        args.output = ROOT / "examples" / name

    from nosync_fix.verify import verify
    from nosync_fix.verify.render import render

    started = time.perf_counter()
    reports = []
    for path, entry in examples():
        if args.only and args.only not in path.name:
            continue
        print(f"verifying {path.relative_to(ROOT)} --entry {entry} ...", flush=True)
        report = verify(path.relative_to(ROOT), entry, device=args.device,
                        backend=args.backend, trials=args.trials, repeat=args.repeat,
                        threads=args.threads, unsafe_fixes=args.unsafe_fixes)
        print(render(report), end="\n\n", flush=True)
        reports.append(report)
    if not args.only:
        command = "python benchmarks/verify_examples.py" + "".join(
            f" --{name} {value}" for name, value in (
                ("device", args.device), ("backend", args.backend), ("trials", args.trials),
                ("repeat", args.repeat), ("threads", args.threads)) if value is not None)
        command += " --unsafe-fixes" if args.unsafe_fixes else ""
        write_report(reports, args.output, command, time.perf_counter() - started,
                     args.unsafe_fixes)
        print(f"wrote {args.output}")
    return 0 if all(r.passed for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
