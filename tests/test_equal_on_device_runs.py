"""NSY504: (a == b).all() decides as torch.equal did, for tensors of one shape."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from read_rules_support import assert_same_tensor, run_fixed  # noqa: E402

from nosync_fix import fix_code  # noqa: E402

SOURCE = """
import torch


class Gate(torch.nn.Module):
    def forward(self, x: torch.Tensor, reference: torch.Tensor):
        if torch.equal(x, reference):
            branch = 1
        else:
            branch = 0
        scaled = reference * torch.equal(x.sign(), reference.sign())
        return branch, scaled
"""

elements = st.sampled_from([0.0, 1.0, -1.0, 2.5, float("nan"), float("inf")])


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 4).flatmap(lambda n: st.tuples(
    st.lists(elements, min_size=n, max_size=n), st.lists(elements, min_size=n, max_size=n))),
    st.booleans(), st.sampled_from([torch.float32, torch.float64, torch.int64]))
def test_same_shapes_decide_the_same(pair, identical, dtype) -> None:
    fixed = run_fixed(SOURCE, "NSY504")
    assert "torch.equal" not in fixed.after_source
    x = torch.tensor(pair[0], dtype=torch.float64)
    reference = x.clone() if identical else torch.tensor(pair[1], dtype=torch.float64)
    if dtype is torch.int64:
        x, reference = x.nan_to_num(0, 0, 0).long(), reference.nan_to_num(0, 0, 0).long()
    else:
        x, reference = x.to(dtype), reference.to(dtype)
    branch_before, scaled_before = fixed.before["Gate"]()(x, reference)
    branch_after, scaled_after = fixed.after["Gate"]()(x, reference)
    assert branch_after == branch_before
    assert_same_tensor(scaled_after, scaled_before)


def test_different_shapes_decide_as_torch_equal() -> None:
    """Shapes that broadcast, or do not, give False as torch.equal did (no broadcast, no raise).

    The SDXL form: `not torch.equal(text_input_ids, untruncated_ids)` with ids of different
    lengths exactly when a prompt is too long.
    """
    fixed = run_fixed(SOURCE, "NSY504")
    pairs = [(torch.ones(3), torch.ones(1)), (torch.ones(3), torch.ones(2)),
             (torch.zeros(2, 0), torch.zeros(0)), (torch.ones(1, 77), torch.ones(1, 80))]
    for x, reference in pairs:
        branch_before, scaled_before = fixed.before["Gate"]()(x, reference)
        branch_after, scaled_after = fixed.after["Gate"]()(x, reference)
        assert branch_after == branch_before == 0
        assert_same_tensor(torch.as_tensor(scaled_after), torch.as_tensor(scaled_before))


def test_impure_operands_are_reported_not_repeated() -> None:
    source = """
import torch


class Gate(torch.nn.Module):
    def forward(self, x: torch.Tensor, noise: torch.Tensor):
        return x * torch.equal(torch.randn_like(x), noise)
"""
    result = fix_code(textwrap.dedent(source), select=["NSY504"], unsafe_fixes=True,
                      all_paths=True)
    assert result.fixed == textwrap.dedent(source)
    assert [f.code for f in result.findings] == ["NSY504"]
    assert "not pure" in result.findings[0].message
