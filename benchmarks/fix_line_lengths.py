"""How long are the lines the fixes add? (issue 20)

    python benchmarks/fix_line_lengths.py                 # golden inputs and examples/
    python benchmarks/fix_line_lengths.py --no-split      # as before: no line is split
    python benchmarks/fix_line_lengths.py --limit 100 PATH...

Runs the fixer one rule at a time (``--select CODE --unsafe-fixes --all-paths``) over
every golden input (``golden/*/*.in.py``) and ``examples/*.py``, or over the given files,
and compares each fixed text with its original line by line (difflib). For every rule it
prints the lines the fix added, how many are longer than the limit (default 88, black's
and ruff's default, which the fixer splits to) and than 100, and the longest; then the ten
longest added lines.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from nosync_fix import fix_code  # noqa: E402
from nosync_fix.config import Settings  # noqa: E402
from nosync_fix.rules import all_rules  # noqa: E402


def added_lines(original: str, fixed: str) -> list[str]:
    before, after = original.splitlines(), fixed.splitlines()
    added: list[str] = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, before, after,
                                                     autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            added.extend(after[j1:j2])
    return added


def measure(paths: list[Path], limit: int) -> dict[str, list[tuple[int, str, str]]]:
    """``limit``: the line length the fixer splits to (0: it splits nothing)."""
    """rule code -> (length, file, line) of every added line."""
    texts = {p: p.read_text(encoding="utf-8") for p in paths}
    found: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for rule in all_rules():
        if rule.fix_kind == "none":
            continue
        for path, text in texts.items():
            result = fix_code(text, filename=path.name, select=[rule.code],
                              unsafe_fixes=True, all_paths=True,
                              settings=Settings(line_length=limit))
            if result.error is not None or not result.changed:
                continue
            for line in added_lines(text, result.fixed):
                found[rule.code].append((len(line), str(path.relative_to(ROOT)), line))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--limit", type=int, default=88)
    parser.add_argument("--no-split", action="store_true",
                        help="fix with line-length 0 (nothing split): the old behaviour")
    options = parser.parse_args(argv)
    paths = [p.resolve() for p in options.paths] or sorted(
        [*ROOT.glob("golden/*/*.in.py"), *ROOT.glob("examples/*.py")])
    limit = options.limit
    found = measure(paths, 0 if options.no_split else limit)
    total = sum(len(v) for v in found.values())
    over = sum(1 for v in found.values() for n, _, _ in v if n > limit)
    over_100 = sum(1 for v in found.values() for n, _, _ in v if n > 100)
    print(f"{len(paths)} files, {total} added lines, {over} over {limit} characters, "
          f"{over_100} over 100\n")
    print(f"| rule | added lines | over {limit} | over 100 | longest |")
    print("| --- | --- | --- | --- | --- |")
    for code in sorted(found):
        lines = found[code]
        print(f"| {code} | {len(lines)} | {sum(1 for n, _, _ in lines if n > limit)} "
              f"| {sum(1 for n, _, _ in lines if n > 100)} "
              f"| {max(n for n, _, _ in lines)} |")
    print("\nLongest added lines:")
    everything = sorted((entry + (code,) for code, v in found.items() for entry in v),
                        reverse=True)
    for n, path, line, code in everything[:10]:
        print(f"  {n:4d} {code} {path}: {line.strip()[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
