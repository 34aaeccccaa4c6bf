"""``benchmarks/paired_check.py``: two versions of the check timed file by file in one
process (its figures are in ``benchmarks/RESULTS.md``; here only that it runs both and
compares what they find)."""

from __future__ import annotations

from pathlib import Path

from benchmark_scripts import ONE_FINDING, ROOT, run_benchmark


def test_a_version_against_itself(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "train.py").write_text(ONE_FINDING, encoding="utf-8")
    (tree / "plain.py").write_text("x = 1\n", encoding="utf-8")
    src = str(ROOT / "src")
    result = run_benchmark("paired_check.py", src, src, str(tree),
                           "--json", str(tmp_path / "rows.json"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("2 files, LibCST parse ")
    assert lines[1].startswith("old: check/parse ") and lines[1].endswith(", findings: 1")
    assert lines[2].startswith("new: check/parse ") and lines[2].endswith(", findings: 1")
    assert lines[3].startswith("new/old check CPU: ")
    rows = (tmp_path / "rows.json").read_text(encoding="utf-8")
    assert '"old findings": 1' in rows and '"new findings": 1' in rows


def test_a_folder_without_the_package_is_refused(tmp_path: Path) -> None:
    result = run_benchmark("paired_check.py", str(tmp_path), str(ROOT / "src"), str(tmp_path))
    assert result.returncode == 2
    assert "holds no nosync_fix package" in result.stderr
    assert "Traceback" not in result.stderr
