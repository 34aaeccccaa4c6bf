"""Running a script of ``benchmarks/`` as a user would, for the tests of those scripts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: A training loop with one finding (NSY201's ``total += ....item()``).
ONE_FINDING = ("import torch\n\ndef train(model, loader):\n    total = 0\n"
               "    for x in loader:\n        total += model(x).sum().item()\n"
               "    return total\n")


def run_benchmark(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python benchmarks/<script> ARGS...``, its output captured."""
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args],
                          capture_output=True, text=True, timeout=300)
