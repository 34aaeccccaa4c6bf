"""``benchmarks/paired_check.py``: two versions of the check timed file by file in one
process (its figures are in ``benchmarks/RESULTS.md``; here only that it runs both and
compares what they find)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "paired_check.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, timeout=300)


def test_a_version_against_itself(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "train.py").write_text(
        "import torch\n\ndef train(model, loader):\n    total = 0\n    for x in loader:\n"
        "        total += model(x).sum().item()\n    return total\n", encoding="utf-8")
    (tree / "plain.py").write_text("x = 1\n", encoding="utf-8")
    src = str(ROOT / "src")
    result = _run(src, src, str(tree), "--json", str(tmp_path / "rows.json"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("2 files, LibCST parse ")
    assert lines[1].startswith("old: check/parse ") and lines[1].endswith(", findings: 1")
    assert lines[2].startswith("new: check/parse ") and lines[2].endswith(", findings: 1")
    assert lines[3].startswith("new/old check CPU: ")
    rows = (tmp_path / "rows.json").read_text(encoding="utf-8")
    assert '"old findings": 1' in rows and '"new findings": 1' in rows


def test_a_folder_without_the_package_is_refused(tmp_path: Path) -> None:
    result = _run(str(tmp_path), str(ROOT / "src"), str(tmp_path))
    assert result.returncode == 2
    assert "holds no nosync_fix package" in result.stderr
    assert "Traceback" not in result.stderr
