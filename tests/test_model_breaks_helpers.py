"""The model benchmark's pure helpers (benchmarks/model_breaks.py); no transformers needed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import torch

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "model_breaks.py"
_SPEC = importlib.util.spec_from_file_location("model_breaks", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
mb = importlib.util.module_from_spec(_SPEC)
sys.modules["model_breaks"] = mb
_SPEC.loader.exec_module(mb)


def test_module_does_not_import_transformers() -> None:
    assert "transformers" not in mb.__dict__


def test_short_path_is_relative_to_the_package() -> None:
    installed = "/x/site-packages/transformers/models/t5/modeling_t5.py"
    copy = "/tmp/model_breaks_1/site/transformers/models/t5/modeling_t5.py"
    assert mb.short_path(installed) == mb.short_path(copy) == "models/t5/modeling_t5.py"
    assert mb.short_path("/x/site-packages/torch/nn/module.py") == "torch/nn/module.py"


def test_percent_and_one_line() -> None:
    assert mb.percent_removed(89, 19) == 100 * 70 / 89
    assert mb.percent_removed(0, 0) is None
    assert mb.one_line("Traceback\n  ...\nValueError: bad\n\n") == "ValueError: bad"
    assert mb.one_line("") == "no output"


def test_compare_outputs_bit_for_bit() -> None:
    a = [("out.logits", torch.tensor([1.0, float("nan")]))]
    assert mb.compare_outputs(a, [("out.logits", a[0][1].clone())]) is None
    nudged = torch.tensor([1.0 + 2**-20, float("nan")])
    assert "max |diff|" in mb.compare_outputs(a, [("out.logits", nudged)])
    assert "float16" in mb.compare_outputs(a, [("out.logits", a[0][1].half())])
    assert "different outputs" in mb.compare_outputs(a, [])


def _arm(breaks: int, timings: list[float]) -> dict[str, Any]:
    reasons = [{"reason": "Unsupported Tensor.item() call", "file": "models/x/modeling_x.py",
                "line": 7, "code": "t.item()", "function": "forward"}] * breaks
    return {"explain": {"graphs": breaks + 1, "breaks": breaks, "reasons": reasons},
            "compile": {"recompiles": 0}, "timings_s": timings}


def test_table_rows_failures_and_totals() -> None:
    rows = [
        {"model": "t5", "dtype": "float32", "before": _arm(3, [0.002, 0.001, 0.003]),
         "after": _arm(0, [0.001]), "eager_identical": True, "compiled_identical": False},
        {"model": "bert", "dtype": "float16", "before": _arm(1, [0.001]),
         "error": "ImportError: no | module", "failed_arm": "after"},
    ]
    lines = mb.table(rows, calls=24)
    assert "recompiles over 24 calls" in lines[0] and "breaks before (explain)" in lines[0]
    assert lines[2].startswith("| t5 | 3 | 0 | 4 / 1 | 0 / 0 | yes | **NO** | 2.00 / 1.00 |")
    assert "modeling_x.py:7 (+2)" in lines[2] and lines[2].endswith("| 3 → 0 |")
    assert "FAILED (after arm): ImportError: no / module" in lines[3]
    assert lines[-1].startswith("Total over 1 rows measured (1 failed): breaks 3 → 0, 100.0%")
    assert "89 → 19, 78.7% removed" in lines[-1]
