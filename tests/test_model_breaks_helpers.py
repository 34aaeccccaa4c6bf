"""The model benchmark's pure helpers (benchmarks/model_breaks.py); no transformers needed."""

from __future__ import annotations

import importlib.util
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
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


def test_disagreements_name_the_arm() -> None:
    arm = {"explain": {"graphs": 4, "breaks": 3}, "compile": {"verifier_graphs": 4}}
    odd = {"explain": {"graphs": 4, "breaks": 3}, "compile": {"verifier_graphs": 3}}
    rows = [{"model": "a", "before": arm, "after": arm},
            {"model": "b", "before": arm, "after": odd}]
    assert mb.disagreements(rows) == [
        "Counts disagree: b (after): explain 4 graphs, nosync-verify 3"]


_LOGGER = logging.getLogger("test_model_breaks_helpers")


class _TwoBreaks(torch.nn.Module):
    def forward(self, x):  # type: ignore[no-untyped-def]
        x = x + 1
        print("a")
        x = x * 2
        _LOGGER.warning("b")
        return x - 1


def _note(x):  # type: ignore[no-untyped-def]
    print("note")
    return x


class _OneSiteTwice(torch.nn.Module):
    def forward(self, x):  # type: ignore[no-untyped-def]
        return _note(_note(x + 1) * 2) - 1


class _DataDependent(torch.nn.Module):
    def forward(self, x):  # type: ignore[no-untyped-def]
        if x.sum().item() > 0:
            x = x * 2
        return x + 1


@pytest.mark.slow
@pytest.mark.parametrize(("model", "breaks", "sites", "recompiles"), [
    (_TwoBreaks(), 2, 2, 0), (_OneSiteTwice(), 2, 1, 0), (_DataDependent(), 1, 1, 2)])
def test_the_benchmark_and_the_verifier_count_the_same_graphs(
        model: torch.nn.Module, breaks: int, sites: int, recompiles: int) -> None:
    inputs = {"x": torch.ones(3)}
    explained = mb.explain_breaks(model, inputs)
    compiled, entry, _ = mb.compiled_run(model, inputs, [{"x": -torch.ones(3)}], "aot_eager", 20)
    assert explained["breaks"] == breaks and explained["graphs"] == breaks + 1
    assert compiled["verifier_graphs"] == explained["graphs"]  # the verifier's own counter
    assert compiled["verifier_breaks"] == sites  # distinct sites: one site met twice is one
    # Over 20 calls alternating the inputs, nothing reset: only the data-dependent branch
    # compiles again (the other side of the `if`, once each way).
    assert compiled["recompiles"] == recompiles
