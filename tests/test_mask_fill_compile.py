"""A Python number stored through a boolean mask is no read: checked against torch.compile.

``x[mask] = 0`` goes to ``index_put_``, which ATen turns into ``masked_fill_`` when the one
index is a boolean mask and the value a Python number (``canDispatchToMaskedFill``): no
count of the selected elements, so no wait in eager mode, and Dynamo traces it whole.
NSY906 leaves such stores alone and reports those whose value is a tensor selection
(``x[mask] = y[mask]``, a graph break and a wait) or is read first (``x[mask] += 1``).
"""

from __future__ import annotations

import textwrap

import pytest

from nosync_fix import check_code

torch = pytest.importorskip("torch")

from compile_support import graph_breaks, namespace  # noqa: E402

#: Compiles with torch._dynamo: `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn


    class Filled(nn.Module):
        def forward(self, scores: torch.Tensor) -> torch.Tensor:
            scores = scores.clone()
            mask = scores > 1
            scores[mask] = 0
            scores[scores < -1] = -float("inf")
            scores[mask] = torch.finfo(scores.dtype).min
            return scores.softmax(-1)


    class Copied(nn.Module):
        def forward(self, scores: torch.Tensor) -> torch.Tensor:
            scores = scores.clone()
            mask = scores > 1
            scores[mask] = scores.flip(-1)[mask]
            return scores.softmax(-1)
""")


def test_only_the_store_of_a_selection_is_reported() -> None:
    findings = [f for f in check_code(SOURCE) if f.code == "NSY906"]
    assert [f.line for f in findings] == [20], findings
    assert "assigns through a boolean mask" in findings[0].message


def test_dynamo_traces_the_stores_of_numbers_whole_and_breaks_at_the_selection() -> None:
    scores = torch.randn(3, 5) * 2
    names = namespace(SOURCE)
    assert graph_breaks(names["Filled"](), scores) == 0
    assert graph_breaks(names["Copied"](), scores) == 1
