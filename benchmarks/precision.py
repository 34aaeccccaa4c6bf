"""Real-code precision of the fixer's rewrites, joined with a committed verdict table.

    python benchmarks/precision.py [--mirror DIR] [--repos NAMES] [--verdicts CSV]
        [--json OUT] [--strict] [--jobs N]

For each pinned code base (a bare git repository under ``--mirror``, extracted at
the pinned commit into a temporary folder; the mirror is never touched) the fixer
runs twice on separate copies: the safe tier, then with ``--unsafe-fixes``. Every
applied fix is a *unit*: rule, tier (the fix's applicability), repository, file,
line, and the before/after text of the lines it touches. Its key is a short hash
of rule + repo-relative path + whitespace-normalised before/after text, so a key
survives line shifts. Units are joined with ``benchmarks/precision_verdicts.csv``
(key, repo, path, line, rule, tier, verdict = correct|wrong,
method = executed|reviewed, reason). Precision = correct / judged, per rule and
per tier; units without a verdict are listed as unjudged (never counted correct)
and make ``--strict`` exit 1.

Each code base is fixed with its own configured line length (the fixer splits longer
new lines): ``line-length`` of ``[tool.nosync-fix]``, ``[tool.ruff]`` or
``[tool.black]`` in its top-level pyproject.toml, else ``max-line-length`` of
``[flake8]`` in setup.cfg, tox.ini or .flake8, else 88 (black's and ruff's default);
``--line-length N`` fixes every code base with N instead. The added lines longer than
each code base's length are counted and listed (``lines`` in the JSON output).
"""

from __future__ import annotations

import argparse
import collections
import configparser
import csv
import difflib
import hashlib
import json
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from run_real_code import _copy_python_files  # noqa: E402

from nosync_fix.config import ConfigError, Settings, _read_toml  # noqa: E402
from nosync_fix.runner import Mode, run  # noqa: E402

# mirror folder name -> pinned commit
PINNED = {
    "huggingface+diffusers": "58eb52c0803ea9af3abec60841c2a093bdf1f951",
    "huggingface+pytorch-image-models": "aa4b5850c1543fa488abf260f18390eda46cf85d",
    "pytorch+examples": "77f55b912142e11fcfdf5b530231fb9c52f181e8",
    "pytorch+torchtune": "bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1",
    "karpathy+nanoGPT": "3adf61e154c3fe3fca428ad6bc3818b27a3b8291",
    "karpathy+minGPT": "37baab71b9abea1b76ab957409a1cc2fbfba8a26",
}
VERDICTS = ROOT / "benchmarks" / "precision_verdicts.csv"
#: The configuration files that may set a code base's line length (extracted with it).
STYLE_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", ".flake8")
DEFAULT_LINE_LENGTH = 88
FIELDS = ("key", "repo", "path", "line", "rule", "tier", "verdict", "method", "reason")


@dataclass
class Unit:
    key: str
    rule: str
    tier: str
    repo: str
    path: str
    line: int
    before: str
    after: str


def normalise(text: str) -> str:
    return " ".join(text.split())


def unit_key(rule: str, path: str, before: str, after: str) -> str:
    blob = "\0".join((rule, path, normalise(before), normalise(after)))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def blocks(before: str, after: str) -> list[tuple[int, int, str, str]]:
    """The changed line blocks of a rewrite: (first, last) old lines (0-based), old, new text."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    found = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            found.append((i1, max(i1, i2 - 1), "".join(old[i1:i2]), "".join(new[j1:j2])))
    return found


def configured_line_length(source: Path) -> tuple[int, str]:
    """A code base's line length from its top-level configuration, and where it came from."""
    pyproject = source / "pyproject.toml"
    if pyproject.is_file():
        try:
            tools = _read_toml(pyproject).get("tool", {})
        except ConfigError:
            tools = {}
        for tool in ("nosync-fix", "ruff", "black"):
            value = tools.get(tool, {}).get("line-length")
            if isinstance(value, int) and not isinstance(value, bool):
                return value, f"pyproject.toml [tool.{tool}] line-length"
    for name in ("setup.cfg", "tox.ini", ".flake8"):
        path = source / name
        if not path.is_file():
            continue
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(path.read_text(encoding="utf-8"))
        except configparser.Error:
            continue
        for key in ("max-line-length", "max_line_length"):
            value = parser.get("flake8", key, fallback=None)
            if value is not None and value.strip().isdigit():
                return int(value.strip()), f"{name} [flake8] {key}"
    return DEFAULT_LINE_LENGTH, "none configured: black's and ruff's default"


def collect(repo: str, tree: Path, unsafe: bool, jobs: int | None,
            line_length: int = DEFAULT_LINE_LENGTH,
            long_lines: list[dict] | None = None) -> list[Unit]:
    """One unit per applied fix: the changed block of lines holding its finding.

    Fixes are applied as one rewrite per file; a finding is matched to the changed block
    that holds (or is nearest to) its line, so two findings of one block share its text.
    Added lines longer than ``line_length`` are appended to ``long_lines``.
    """
    sources = {p.resolve(): p.read_text(encoding="utf-8", errors="replace")
               for p in tree.rglob("*.py")}
    settings = Settings(unsafe_fixes=unsafe, line_length=line_length).validate()
    units = []
    for outcome in run([str(tree)], settings, Mode.FIX, jobs=jobs):
        if outcome.result is None or outcome.error is not None or not outcome.result.applied:
            continue
        path = Path(outcome.filename).resolve()
        relative = str(path.relative_to(tree.resolve()))
        changed = blocks(sources.get(path, ""), path.read_text(encoding="utf-8", errors="replace"))
        if not changed:
            continue
        if long_lines is not None:
            for first, _, _, new_text in changed:
                for line in new_text.splitlines():
                    if len(line) > line_length:
                        long_lines.append({"repo": repo, "path": relative, "near": first + 1,
                                           "length": len(line),
                                           "tier": "unsafe" if unsafe else "safe"})
        for finding in outcome.result.applied:
            if finding.fix is None:
                continue
            tier = finding.fix.applicability.value
            if unsafe and tier == "safe":
                continue  # counted in the safe pass
            line = finding.line - 1
            first, _, before, after = min(
                changed, key=lambda b: 0 if b[0] <= line <= b[1] else min(abs(line - b[0]),
                                                                           abs(line - b[1])) + 1)
            units.append(Unit(unit_key(finding.code, relative, before, after), finding.code,
                              tier, repo, relative, finding.line, before, after))
    return units


def extract(mirror: Path, name: str, commit: str, target: Path) -> Path:
    repo = mirror / name / "repo"
    raw = target / "raw"
    raw.mkdir(parents=True)
    names = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", commit],
                           check=True, capture_output=True, text=True).stdout.splitlines()
    # Python files only: some snapshots lack their large data files
    wanted = [n for n in names if n.endswith((".py", ".pyi", "pyproject.toml", ".gitignore"))
              or n in STYLE_FILES]
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit, "--", *wanted],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(raw)], input=archive, check=True)
    return raw


def collect_checkout(repo: str, source: Path, jobs: int | None = 1,
                     line_length: int | None = None,
                     lines: dict[str, dict] | None = None) -> list[Unit]:
    """Both tiers over copies of ``source``; the checkout itself is not touched.

    ``line_length`` None: the code base's own (:func:`configured_line_length`). What was
    used and the added lines longer than it go into ``lines[repo]``."""
    where = "--line-length"
    if line_length is None:
        line_length, where = configured_line_length(source)
    long_lines: list[dict] = []
    units: list[Unit] = []
    for unsafe in (False, True):
        with tempfile.TemporaryDirectory(prefix="nosync-prec-") as scratch:
            tree = Path(scratch) / repo
            _copy_python_files(source, tree)
            units += collect(repo, tree, unsafe, jobs, line_length, long_lines)
    if lines is not None:
        lines[repo] = {"line_length": line_length, "from": where, "over": long_lines}
    unique = {u.key: u for u in units}
    return sorted(unique.values(), key=lambda u: (u.repo, u.path, u.line, u.rule))


def load_verdicts(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["key"]: row for row in csv.DictReader(handle)}


def join(units: list[Unit], verdicts: dict[str, dict]) -> dict:
    per: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    unjudged = []
    for unit in units:
        row = verdicts.get(unit.key)
        for group in (f"rule {unit.rule} {unit.tier}", f"tier {unit.tier}"):
            if row is None:
                per[group]["unjudged"] += 1
            else:
                per[group]["judged"] += 1
                per[group][row["verdict"]] += 1
        if row is None:
            unjudged.append(unit)
    table = {}
    for group, c in sorted(per.items()):
        table[group] = {"correct": c["correct"], "wrong": c["wrong"], "judged": c["judged"],
                        "unjudged": c["unjudged"],
                        "precision": round(c["correct"] / c["judged"], 3) if c["judged"] else None}
    wrong = [asdict(u) | {"reason": verdicts[u.key]["reason"]} for u in units
             if u.key in verdicts and verdicts[u.key]["verdict"] == "wrong"]
    return {"precision": table, "unjudged": [asdict(u) for u in unjudged], "wrong": wrong,
            "units": len(units)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default="/work/.mirror")
    parser.add_argument("--repos", default=",".join(PINNED))
    parser.add_argument("--checkout", action="append", default=[],
                        help="NAME=DIR: a local checkout instead of the pinned mirrors")
    parser.add_argument("--verdicts", default=str(VERDICTS))
    parser.add_argument("--json")
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--stub", help="write unjudged units as CSV rows to this file")
    parser.add_argument("--line-length", type=int,
                        help="fix every code base with this line length instead of its own")
    args = parser.parse_args(argv)
    units: list[Unit] = []
    lines: dict[str, dict] = {}
    if args.checkout:
        for item in args.checkout:
            name, _, folder = item.partition("=")
            units += collect_checkout(name, Path(folder), args.jobs, args.line_length, lines)
    else:
        for name in args.repos.split(","):
            with tempfile.TemporaryDirectory(prefix="nosync-prec-src-") as scratch:
                raw = extract(Path(args.mirror), name, PINNED[name], Path(scratch))
                units += collect_checkout(name.split("+", 1)[1], raw, args.jobs,
                                          args.line_length, lines)
    result = join(units, load_verdicts(Path(args.verdicts))) | {"lines": lines}
    print(f"{result['units']} rewrites")
    print(f"{'group':<24} {'correct':>7} {'wrong':>5} {'judged':>6} {'unjudged':>8} precision")
    for group, row in result["precision"].items():
        shown = "-" if row["precision"] is None else f"{row['precision']:.3f}"
        print(f"{group:<24} {row['correct']:>7} {row['wrong']:>5} {row['judged']:>6} "
              f"{row['unjudged']:>8} {shown}")
    for repo, info in lines.items():
        print(f"{repo}: line length {info['line_length']} ({info['from']}); "
              f"{len(info['over'])} added lines longer")
        for item in info["over"]:
            print(f"  {item['tier']} {item['path']}:{item['near']} {item['length']} characters")
    for item in result["wrong"]:
        print(f"WRONG {item['rule']} {item['tier']} {item['repo']}/{item['path']}:{item['line']}"
              f" {item['key']}: {item['reason']}")
    for item in result["unjudged"]:
        print(f"unjudged {item['key']} {item['rule']} {item['tier']} "
              f"{item['repo']}/{item['path']}:{item['line']}")
    if args.json:
        Path(args.json).write_text(json.dumps(result | {"all": [asdict(u) for u in units]},
                                              indent=2) + "\n", encoding="utf-8")
    if args.stub:
        with open(args.stub, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, FIELDS)
            writer.writeheader()
            for item in result["unjudged"]:
                writer.writerow({k: item.get(k, "") for k in FIELDS[:6]}
                                | {"repo": item["repo"], "line": item["line"]})
    return 1 if args.strict and result["unjudged"] else 0


if __name__ == "__main__":
    sys.exit(main())
