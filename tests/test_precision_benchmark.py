"""benchmarks/precision.py: stable keys, the verdict join, unjudged rewrites reported."""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
_spec = importlib.util.spec_from_file_location("precision", ROOT / "benchmarks" / "precision.py")
precision = importlib.util.module_from_spec(_spec)
sys.modules["precision"] = precision
_spec.loader.exec_module(precision)

BODY = """import torch


def train(model, batches, opt):
    total = torch.zeros(())
    for x in batches:
        loss = model(x)
        loss.backward()
        opt.step()
        total += loss.item()
    print(total)
"""


def _units(tmp_path: Path, name: str, text: str) -> list:
    checkout = tmp_path / name
    checkout.mkdir()
    (checkout / "train.py").write_text(text, encoding="utf-8")
    return precision.collect_checkout("demo", checkout, jobs=1)


def test_key_stable_under_line_shifts(tmp_path: Path) -> None:
    plain = _units(tmp_path, "a", BODY)
    shifted = _units(tmp_path, "b", "# a comment\n\n\n" + BODY)
    assert plain, "the synthetic checkout should get at least one rewrite"
    assert [u.key for u in plain] == [u.key for u in shifted]
    assert [u.line + 3 for u in plain] == [u.line for u in shifted]
    assert all(u.before != u.after for u in plain)


def test_join_finds_verdicts_and_reports_unjudged(tmp_path: Path) -> None:
    units = _units(tmp_path, "a", BODY)
    table = tmp_path / "verdicts.csv"
    with table.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, precision.FIELDS)
        writer.writeheader()
        writer.writerow({"key": units[0].key, "repo": "demo", "path": "train.py",
                         "line": units[0].line, "rule": units[0].rule, "tier": units[0].tier,
                         "verdict": "correct", "method": "reviewed", "reason": "test"})
    result = precision.join(units, precision.load_verdicts(table))
    tier = result["precision"][f"tier {units[0].tier}"]
    assert tier["correct"] >= 1 and tier["precision"] is not None
    assert len(result["unjudged"]) == len(units) - 1
    empty = precision.join(units, {})
    assert len(empty["unjudged"]) == len(units)
    assert all(row["precision"] is None for row in empty["precision"].values())


def test_strict_exits_non_zero_when_unjudged(tmp_path: Path) -> None:
    checkout = tmp_path / "c"
    checkout.mkdir()
    (checkout / "train.py").write_text(BODY, encoding="utf-8")
    empty = tmp_path / "none.csv"
    args = ["--checkout", f"demo={checkout}", "--verdicts", str(empty)]
    assert precision.main(args + ["--strict"]) == 1
    assert precision.main(args) == 0


def test_each_code_base_is_fixed_with_its_own_line_length(tmp_path: Path) -> None:
    ruff = tmp_path / "ruff"
    ruff.mkdir()
    (ruff / "pyproject.toml").write_text("[tool.ruff]\nline-length = 119\n", encoding="utf-8")
    flake8 = tmp_path / "flake8"
    flake8.mkdir()
    (flake8 / ".flake8").write_text("[flake8]\nmax-line-length = 120\n", encoding="utf-8")
    (flake8 / "pyproject.toml").write_text("[tool.black]\ntarget-version = ['py38']\n",
                                           encoding="utf-8")
    bare = tmp_path / "bare"
    bare.mkdir()
    assert precision.configured_line_length(ruff)[0] == 119
    assert precision.configured_line_length(flake8) == (120, ".flake8 [flake8] max-line-length")
    assert precision.configured_line_length(bare)[0] == 88


def test_added_lines_longer_than_the_code_base_allows_are_listed(tmp_path: Path) -> None:
    # A NSY304 rewrite of a long constant message: one line at 119, split at 88.
    body = ('import logging\nimport torch\n\nlogger = logging.getLogger(__name__)\n\n\n'
            'class Net(torch.nn.Module):\n    def forward(self, x):\n'
            '        if x.shape[0] > 1:\n            logger.info("Forward the upsample size to '
            'force the output size.")\n        return x * 2\n\n\n'
            'net = torch.compile(Net())\n')
    checkout = tmp_path / "c"
    checkout.mkdir()
    (checkout / "model.py").write_text(body, encoding="utf-8")
    afters = {}
    for length in (88, 119, 60):
        lines: dict = {}
        (unit,) = precision.collect_checkout("demo", checkout, 1, length, lines)
        afters[length] = unit.after
        assert lines["demo"]["line_length"] == length
        over = lines["demo"]["over"]
        if length == 60:  # the string alone is longer: listed, with its length
            assert over and all(item["length"] > 60 for item in over)
        else:
            assert not over
    assert len(afters[119].splitlines()) == 1 < len(afters[88].splitlines())
