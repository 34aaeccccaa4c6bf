"""Where the check's time goes, stage by stage and by kind of file, in one process.

    python benchmarks/check_stages.py TREE... [--json OUT]

For every ``.py`` file under TREE...: ``process_source(..., fix=False, with_edits=False)``
with the engine's stages timed in place (CPU time, ``time.process_time()``), then
``libcst.parse_module`` of the same bytes; the collector is off while timing and runs
in full between files. The stages are the engine's own functions, wrapped where the
engine looks them up:

- ``ast parse``: Python's parse of the file (``prefilter.parse``);
- ``compile check``: the compiler's checks on that tree (``engine.tree_compiles``);
- ``compile, no ast``: Python's parse and compile in one, for a file on which no rule is
  triggered, which needs no ``ast`` (``engine.source_compiles``);
- ``scan``: the pre-filter's walk (``prefilter.scan``);
- ``slicing``: choosing what LibCST sees (``slicing.relevant_text``);
- ``LibCST parse``: LibCST's parse of the slice or of the whole text (``engine.parse``);
- ``rules``: the analysis and the rules on it (``engine._run_rules``);
- ``the rest``: everything else the check does (suppression comments, iteration
  notes, the nesting depth, decoding, the engine's own work).

Files are grouped as: no finding and not analysed (the pre-filter left them out),
with findings, and analysed without a finding. Reported: each group's files, bytes,
check CPU and its stages, and the check over LibCST's parse of the whole tree.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import libcst as cst

from nosync_fix import engine, prefilter, slicing
from nosync_fix.config import Settings

STAGES = {
    "ast parse": (prefilter, "parse"),
    "compile check": (engine, "tree_compiles"),
    "compile, no ast": (engine, "source_compiles"),
    "scan": (prefilter, "scan"),
    "slicing": (slicing, "relevant_text"),
    "LibCST parse": (engine, "parse"),
    "rules": (engine, "_run_rules"),
}
GROUPS = ("not analysed", "with findings", "analysed, no finding")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path, help="folders of .py files")
    parser.add_argument("--json", dest="json_out", help="also write the figures here")
    args = parser.parse_args()
    files = sorted(p for tree in args.trees for p in tree.rglob("*.py"))
    if not files:
        parser.error("no .py file under the trees")
    spent: collections.Counter[str] = collections.Counter()
    for name, (module, attribute) in STAGES.items():
        setattr(module, attribute, _timed(getattr(module, attribute), name, spent))
    settings = Settings()
    groups = {g: collections.Counter() for g in GROUPS}
    parse_total = 0.0
    for path in files:
        source = path.read_bytes()
        before = dict(spent)
        gc.collect()
        gc.disable()
        start = time.process_time()
        result = engine.process_source(source, str(path), settings, fix=False,
                                       with_edits=False)
        check = time.process_time() - start
        start = time.process_time()
        try:
            cst.parse_module(source)
        except Exception:  # noqa: BLE001 - LibCST's failures are not this script's subject
            pass
        parse_total += time.process_time() - start
        gc.enable()
        analysed = spent["LibCST parse"] != before.get("LibCST parse", 0.0)
        group = groups["with findings" if result.findings else
                       "analysed, no finding" if analysed else "not analysed"]
        group["files"] += 1
        group["bytes"] += len(source)
        group["check"] += check
        group["findings"] += len(result.findings)
        for stage in STAGES:
            group[stage] += spent[stage] - before.get(stage, 0.0)
    report = _report(groups, parse_total)
    print(report)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(
            {"libcst_parse_cpu_s": parse_total,
             "groups": {g: dict(c) for g, c in groups.items()}}, indent=2) + "\n")
    return 0


def _timed(function: Callable[..., Any], name: str,
           spent: collections.Counter[str]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - start
    return timed


def _report(groups: dict[str, collections.Counter[str]], parse_total: float) -> str:
    total = collections.Counter()
    for group in groups.values():
        total.update(group)
    header = ["files", "count", "MB", "findings", "check s", *STAGES, "the rest"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for name, group in (*groups.items(), ("all", total)):
        rest = group["check"] - sum(group[stage] for stage in STAGES)
        cells = [name, f"{group['files']:,}", f"{group['bytes'] / 1e6:.1f}",
                 f"{group['findings']:,}", f"{group['check']:.2f}",
                 *(f"{group[stage]:.2f}" for stage in STAGES), f"{rest:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    ratio = total["check"] / parse_total if parse_total else float("nan")
    lines.append(f"\ncheck {total['check']:.2f} s CPU, LibCST parse {parse_total:.2f} s CPU: "
                 f"check/parse {ratio:.3f}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
