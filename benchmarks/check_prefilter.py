"""The pre-filter's soundness checks, run on real code bases.

    python benchmarks/check_prefilter.py TREE... [--findings]

For every file ``nosync-fix`` would check under TREE... (fetched checkouts, never
committed):

1. every expression the analysis calls a tensor (or an nn.Module) is a possible
   one for :class:`nosync_fix.maybe_tensors.MaybeTensors` (the check of
   ``tests/test_maybe_tensors.py``);
2. with ``--findings``: ``nosync-fix --check`` finds the same with the pre-filter
   (and so the slicing of :mod:`nosync_fix.slicing`) on and off, with default
   settings and with ``--all-paths``; with the edits of the fixes (as the JSON
   output gives them) and without (as the text output needs them, the path on
   which findings come from the slice alone).

Prints each failure and a summary; exits 1 if anything failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from test_maybe_tensors import _claims_hold  # noqa: E402

from nosync_fix.config import Settings  # noqa: E402
from nosync_fix.engine import process_source  # noqa: E402
from nosync_fix.files import discover  # noqa: E402
from nosync_fix.findings import Finding  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", help="folders to check")
    parser.add_argument("--findings", action="store_true",
                        help="also compare findings with the pre-filter on and off (slow)")
    args = parser.parse_args()
    started = time.monotonic()
    files = [Path(f) for f in discover(args.trees, Settings())[0]]
    checked = failures = skipped = 0
    for path in files:
        try:
            source = path.read_text(encoding="utf-8")
            compile(source, str(path), "exec", dont_inherit=True)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            skipped += 1
            continue
        try:
            checked += _claims_hold(source)
        except AssertionError as error:
            failures += 1
            print(f"FAIL {path}: {str(error).splitlines()[0]}")
        except RecursionError:
            skipped += 1
        if args.findings:
            for all_paths in (False, True):
                on = dataclasses.replace(Settings(), all_paths=all_paths)
                off = dataclasses.replace(on, prefilter=False)
                without = process_source(source, str(path), off, fix=False).findings
                for with_edits in (True, False):
                    with_filter = process_source(source, str(path), on, fix=False,
                                                 with_edits=with_edits).findings
                    if with_filter != (without if with_edits else _without_edits(without)):
                        failures += 1
                        print(f"FAIL {path}: findings differ with the pre-filter on and off "
                              f"(all_paths={all_paths}, with_edits={with_edits}): "
                              f"{len(with_filter)} against {len(without)}")
    print(f"{len(files)} files ({skipped} skipped: not UTF-8, not valid Python or too deep), "
          f"{checked} tensor/module claims checked, {failures} failures, "
          f"{time.monotonic() - started:.0f} s")
    return 1 if failures else 0


def _without_edits(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    return tuple(dataclasses.replace(f, fix=dataclasses.replace(f.fix, edits=()))
                 if f.fix is not None else f for f in findings)


if __name__ == "__main__":
    sys.exit(main())
