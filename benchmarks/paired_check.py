"""Two versions of the check against each other, file by file, in one process.

    python benchmarks/paired_check.py OLD_SRC NEW_SRC TREE... [--json OUT]

OLD_SRC and NEW_SRC are ``src`` folders of two checkouts (``git worktree add /tmp/old
<rev>``; the same folder twice gives the control pair). Each ``nosync_fix`` package is
copied under a name of its own into a temporary folder, so that both import in one
process. For every ``.py`` file under TREE...: ``process_source(..., fix=False,
with_edits=False)`` of each version in turn, the order flipping from file to file, then
``libcst.parse_module`` of the same bytes; CPU time from ``time.process_time()``, with the
collector off while timing and a full collection after each step.

On a shared machine the load moves LibCST's parse and the analysis by different amounts
from one pass to the next, so the check/parse ratios of two separate passes are not
comparable; here the load falls on both versions alike, and new/old is the figure to read.
Reported: each version's check/parse ratio, split between files with and without
findings, their findings (which must agree), and new/old check CPU.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="src folder of the old version")
    parser.add_argument("new", type=Path, help="src folder of the new version")
    parser.add_argument("trees", nargs="+", type=Path, help="folders of .py files")
    parser.add_argument("--json", dest="json_out", help="also write the per-file figures")
    args = parser.parse_args()
    for src in (args.old, args.new):
        if not (src / "nosync_fix" / "engine.py").is_file():
            parser.error(f"{src} holds no nosync_fix package")
    files = sorted(p for tree in args.trees for p in tree.rglob("*.py"))
    if not files:
        parser.error("no .py file under the trees")
    with tempfile.TemporaryDirectory() as folder:
        engines = {}
        for name, src in (("old", args.old), ("new", args.new)):
            shutil.copytree(src / "nosync_fix", Path(folder) / f"nosync_{name}",
                            ignore=shutil.ignore_patterns("__pycache__"))
        sys.path.insert(0, folder)
        for name in ("old", "new"):
            engine = importlib.import_module(f"nosync_{name}.engine")
            settings = importlib.import_module(f"nosync_{name}.config").Settings()
            engines[name] = (engine, settings)
        rows = _run(files, engines)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    _report(rows)
    return 0 if all(r["old findings"] == r["new findings"] for r in rows) else 1


def _run(files: list[Path], engines: dict) -> list[dict]:
    import libcst

    rows = []
    gc.disable()
    try:
        for index, path in enumerate(files):
            data = path.read_bytes()
            row: dict = {"file": str(path)}
            for name in ("old", "new") if index % 2 == 0 else ("new", "old"):
                engine, settings = engines[name]
                started = time.process_time()
                result = engine.process_source(data, str(path), settings, fix=False,
                                               with_edits=False)
                row[name] = time.process_time() - started
                row[f"{name} findings"] = len(result.findings)
                gc.collect()
            started = time.process_time()
            try:
                libcst.parse_module(data)
            except Exception:  # noqa: BLE001 - what LibCST cannot parse costs what it costs
                pass
            row["parse"] = time.process_time() - started
            gc.collect()
            rows.append(row)
    finally:
        gc.enable()
    return rows


def _report(rows: list[dict]) -> None:
    parse = sum(r["parse"] for r in rows)
    print(f"{len(rows)} files, LibCST parse {parse:.1f} s of CPU")
    for name in ("old", "new"):
        check = sum(r[name] for r in rows)
        with_findings = sum(r[name] for r in rows if r[f"{name} findings"])
        print(f"{name}: check/parse {check / parse:.3f} (files with findings "
              f"{with_findings / parse:.3f}, without {(check - with_findings) / parse:.3f}),"
              f" findings: {sum(r[f'{name} findings'] for r in rows)}")
    differ = [r["file"] for r in rows if r["old findings"] != r["new findings"]]
    for path in differ:
        print(f"findings differ: {path}")
    print(f"new/old check CPU: {sum(r['new'] for r in rows) / sum(r['old'] for r in rows):.3f}")


if __name__ == "__main__":
    sys.exit(main())
