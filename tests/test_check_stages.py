"""``benchmarks/check_stages.py``: the check's CPU by stage and by kind of file (its
figures are in ``benchmarks/RESULTS.md``; here that it sorts files and stages right)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmark_scripts import ONE_FINDING, run_benchmark

STAGES = ("ast parse", "compile check", "compile, no ast", "scan", "slicing", "LibCST parse",
          "rules")


def test_files_are_grouped_and_only_analysed_ones_reach_libcst(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "train.py").write_text(ONE_FINDING, encoding="utf-8")
    (tree / "plain.py").write_text("x = 1\n", encoding="utf-8")
    (tree / "helpers.py").write_text("def f(a):\n    return a + 1\n", encoding="utf-8")
    out = tmp_path / "stages.json"
    result = run_benchmark("check_stages.py", str(tree), "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert "check/parse " in result.stdout
    groups = json.loads(out.read_text(encoding="utf-8"))["groups"]
    assert groups["with findings"]["files"] == 1
    assert groups["with findings"]["findings"] == 1
    assert groups["not analysed"]["files"] == 2
    assert groups["not analysed"].get("LibCST parse", 0) == 0
    assert groups["not analysed"].get("rules", 0) == 0
    # `x = 1` triggers no rule: Python compiles it without an `ast`.
    assert groups["not analysed"]["compile, no ast"] > 0
    found = groups["with findings"]
    assert found["LibCST parse"] > 0 and found["rules"] > 0 and found["ast parse"] > 0
    assert sum(found[stage] for stage in STAGES) <= found["check"]


def test_a_tree_without_python_files_is_refused(tmp_path: Path) -> None:
    result = run_benchmark("check_stages.py", str(tmp_path))
    assert result.returncode == 2
    assert "no .py file under the trees" in result.stderr
    assert "Traceback" not in result.stderr
