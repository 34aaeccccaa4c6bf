"""Run the fixer over real code bases and check that it holds up.

    python benchmarks/run_real_code.py CHECKOUT... [--out DIR] [--unsafe-fixes]
        [--all-paths] [--select CODES] [--jobs N] [--in-place]

Each CHECKOUT (a local clone of Lightning, timm, detectron2, torchtune,
pytorch/examples ...) is copied to a temporary folder (its Python files only)
and fixed there, twice; the checkout itself is not touched unless ``--in-place``
is given. Checked:

* no crash: every file gets an outcome; files with errors are listed;
* every rewritten file still compiles;
* the second pass changes nothing and reports the same findings as the first
  pass left (a fixed point);
* finding counts per rule (found = fixed + left), fixes per applicability.

Writes ``DIR/summary.json`` (machine-readable), ``DIR/diffs/<checkout>/...diff``
(every rewrite, for review) and prints a table. Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from nosync_fix.config import Settings  # noqa: E402
from nosync_fix.runner import FileOutcome, Mode, run  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+")
    parser.add_argument("--out", default="real_code_out", help="folder for the results")
    parser.add_argument("--unsafe-fixes", action="store_true")
    parser.add_argument("--all-paths", action="store_true")
    parser.add_argument("--select", default="ALL", help="comma-separated codes or prefixes")
    parser.add_argument("--jobs", "-j", type=int, default=None)
    parser.add_argument("--in-place", action="store_true",
                        help="fix the checkouts themselves instead of copies")
    args = parser.parse_args()
    settings = Settings(select=tuple(args.select.split(",")), unsafe_fixes=args.unsafe_fixes,
                        all_paths=args.all_paths).validate()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {"settings": {"select": args.select, "unsafe_fixes": args.unsafe_fixes,
                            "all_paths": args.all_paths}, "checkouts": []}
    failed = False
    for checkout in args.checkouts:
        source = Path(checkout).resolve()
        with tempfile.TemporaryDirectory(prefix="nosync-real-") as scratch:
            if args.in_place:
                tree = source
            else:
                tree = Path(scratch) / source.name
                _copy_python_files(source, tree)
            report = _check_tree(source.name, tree, settings, args.jobs, out / "diffs")
        summary["checkouts"].append(report)
        failed |= bool(report["crashes"] or report["not_compiling"]
                       or report["not_idempotent"] or report["internal_errors"])
        _print(report)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"summary: {out / 'summary.json'}")
    return 1 if failed else 0


def _copy_python_files(source: Path, target: Path) -> None:
    for folder, names, files in os.walk(source):
        names[:] = [n for n in names if n != ".git"]
        for name in files:
            if name.endswith((".py", ".pyi")) or name in ("pyproject.toml", ".gitignore"):
                path = Path(folder, name)
                if path.is_symlink():
                    continue
                destination = target / path.relative_to(source)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, destination)


def _check_tree(name: str, tree: Path, settings: Settings, jobs: int | None,
                diffs: Path) -> dict:
    started = time.perf_counter()
    crashes: list[str] = []
    try:
        first = run([str(tree)], settings, Mode.FIX, jobs=jobs)
    except Exception as error:  # noqa: BLE001 - a crash is what this script looks for
        return {"name": name, "crashes": [f"first pass: {type(error).__name__}: {error}"],
                "not_compiling": [], "not_idempotent": [], "internal_errors": []}
    first_seconds = time.perf_counter() - started

    def rel(path: str) -> str:
        return str(Path(path).relative_to(tree)) if Path(path).is_absolute() else str(
            Path(path).resolve().relative_to(tree))

    written = [o for o in first if o.written]
    not_compiling = []
    for outcome in written:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(Path(outcome.filename).read_bytes(), outcome.filename, "exec")
        except (SyntaxError, ValueError) as error:
            not_compiling.append(f"{rel(outcome.filename)}: {error}")
        _write_diff(diffs / name, rel(outcome.filename), outcome, tree)

    try:
        second = run([str(tree)], settings, Mode.FIX, jobs=jobs)
    except Exception as error:  # noqa: BLE001
        crashes.append(f"second pass: {type(error).__name__}: {error}")
        second = []
    left_first = _finding_keys(first, rel)
    left_second = _finding_keys(second, rel)
    not_idempotent = sorted(
        {rel(o.filename) for o in second if o.written or (o.result and o.result.applied)}
        | {f for f, *_ in left_first ^ left_second})

    found: collections.Counter[str] = collections.Counter()
    fixed: collections.Counter[str] = collections.Counter()
    by_applicability: collections.Counter[str] = collections.Counter()
    for outcome in first:
        if outcome.result is None or outcome.error is not None:
            continue
        for finding in outcome.result.applied:
            fixed[finding.code] += 1
            found[finding.code] += 1
            if finding.fix is not None:
                by_applicability[finding.fix.applicability.value] += 1
        for finding in outcome.result.findings:
            found[finding.code] += 1
    errors = [o.error for o in first if o.error is not None]
    return {
        "name": name,
        "files": len(first),
        "seconds_first_pass": round(first_seconds, 1),
        "changed_files": len(written),
        "found_per_rule": dict(sorted(found.items())),
        "fixed_per_rule": dict(sorted(fixed.items())),
        "left_per_rule": {c: found[c] - fixed[c] for c in sorted(found)},
        "fixes_by_applicability": dict(by_applicability),
        "errors": [f"{rel(e.filename)}: [{e.kind}] {e.message}" for e in errors],
        "internal_errors": [f"{rel(e.filename)}: {e.message}" for e in errors
                            if e.kind == "internal"],
        "crashes": crashes,
        "not_compiling": not_compiling,
        "not_idempotent": not_idempotent,
    }


def _finding_keys(outcomes: list[FileOutcome], rel) -> set[tuple]:  # type: ignore[no-untyped-def]
    return {(rel(o.filename), f.line, f.column, f.code)
            for o in outcomes if o.result is not None and o.error is None
            for f in o.result.findings}


def _write_diff(folder: Path, relative: str, outcome: FileOutcome, tree: Path) -> None:
    if outcome.result is None or not outcome.result.diff:
        return
    path = folder / (relative + ".diff")
    path.parent.mkdir(parents=True, exist_ok=True)
    notes = "".join(f"# {f.code} line {f.line}: {f.message}\n" for f in outcome.result.applied)
    diff = outcome.result.diff.replace(str(tree) + os.sep, "")  # paths in the checkout
    path.write_text(notes + diff, encoding="utf-8")


def _print(report: dict) -> None:
    print(f"== {report['name']}: {report.get('files', '?')} files, "
          f"{report.get('changed_files', 0)} changed, "
          f"{report.get('seconds_first_pass', '?')} s first pass")
    for code, count in report.get("found_per_rule", {}).items():
        print(f"   {code}: {count} found, {report['fixed_per_rule'].get(code, 0)} fixed")
    for key in ("errors", "crashes", "not_compiling", "not_idempotent"):
        items = report.get(key, [])
        print(f"   {key}: {len(items)}")
        for item in items[:20]:
            print(f"      {item}")


if __name__ == "__main__":
    sys.exit(main())
