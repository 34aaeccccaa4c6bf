"""NSY503: masked reductions and counts agree with the selections they replace."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from read_rules_support import assert_same_tensor, run_fixed  # noqa: E402

SOURCE = """
import torch


class Reductions(torch.nn.Module):
    def forward(self, x: torch.Tensor, threshold: float):
        mask = (x > threshold) & ~torch.isnan(x)
        total = x[mask].sum()
        mean = x[mask].mean()
        count = len(x[mask])
        numel_count = x[x > threshold].numel()
        nonzero_count = mask.nonzero().size(0)
        per_count = x.sum() / count
        per_numel = x.sum() / numel_count
        per_nonzero = x.sum() / nonzero_count
        return total, mean, per_count, per_numel, per_nonzero


class Extremes(torch.nn.Module):
    def forward(self, x: torch.Tensor, threshold: float):
        y = x.float()  # a floating tensor: the fill is an infinity
        return y[y > threshold].max(), y[y > threshold].min()


class Flags(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        flags = x > 0
        return flags[flags].sum(), x.int()[x > 0].sum()
"""

values = st.floats(-10, 10, width=32) | st.sampled_from([float("nan"), 0.0, -0.0])
tensors = st.lists(values, min_size=0, max_size=6).map(
    lambda v: torch.tensor(v, dtype=torch.float32))
matrices = st.integers(1, 3).flatmap(lambda n: st.lists(
    st.lists(st.floats(-10, 10, width=32), min_size=n, max_size=n), min_size=1, max_size=3
).map(lambda rows: torch.tensor(rows, dtype=torch.float32)))


def _fixed():
    return run_fixed(SOURCE, "NSY503")


def test_every_pattern_is_rewritten() -> None:
    after = _fixed().after_source
    assert not any(f"{name}[" in after for name in ("x", "y", "flags", ".int()"))
    assert after.count("torch.where(") == 6
    assert ".nonzero()" not in after


@settings(max_examples=200, deadline=None)
@given(tensors | matrices, st.sampled_from([0.0, 1.0, -5.0, 100.0]))
def test_sums_means_and_counts_agree(x, threshold) -> None:
    fixed = _fixed()
    before = fixed.before["Reductions"]()(x, threshold)
    after = fixed.after["Reductions"]()(x, threshold)
    for name, b, a in zip(("sum", "mean", "per_count", "per_numel", "per_nonzero"),
                          before, after, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        # The additions happen in another order: the last bits may differ.
        torch.testing.assert_close(a, b, equal_nan=True, rtol=1e-5, atol=1e-5, msg=name)


@settings(max_examples=100, deadline=None)
@given(tensors | matrices, st.sampled_from([0.0, 1.0, -5.0]))
def test_max_and_min_agree_unless_nothing_is_selected(x, threshold) -> None:
    fixed = _fixed()
    if x.numel() == 0:  # nothing to reduce at all: both raise
        for namespace in (fixed.before, fixed.after):
            with pytest.raises(RuntimeError):
                namespace["Extremes"]()(x, threshold)
        return
    after = fixed.after["Extremes"]()(x, threshold)
    if not (x > threshold).any():
        # The documented edge: the original raises on an empty selection, the rewrite
        # returns the fill value.
        with pytest.raises((RuntimeError, IndexError)):
            fixed.before["Extremes"]()(x, threshold)
        assert after[0].item() == float("-inf") and after[1].item() == float("inf")
        return
    before = fixed.before["Extremes"]()(x, threshold)
    for a, b in zip(after, before, strict=True):
        assert_same_tensor(a, b)


@settings(max_examples=60, deadline=None)
@given(tensors | matrices)
def test_bool_and_int_selections_keep_their_sum_dtype(x) -> None:
    fixed = _fixed()
    before = fixed.before["Flags"]()(x)
    after = fixed.after["Flags"]()(x)
    for a, b in zip(after, before, strict=True):
        assert_same_tensor(a, b)


def test_half_mean_overflows_where_the_original_did_not() -> None:
    """The documented reason the mean fix is unsafe."""
    fixed = _fixed()
    x = torch.full((10000,), 10.0, dtype=torch.float16)
    _, mean_before, *_ = fixed.before["Reductions"]()(x, 0.0)
    _, mean_after, *_ = fixed.after["Reductions"]()(x, 0.0)
    assert mean_before.item() == 10.0
    assert mean_after.item() == float("inf")


def test_a_mask_of_fewer_dimensions_broadcasts_differently() -> None:
    """The documented reason a sum over a foreign mask is unsafe: x[mask] with a row mask
    selects rows, torch.where aligns the mask with the last dimension."""
    fixed = run_fixed("""
        import torch

        def total(x: torch.Tensor, labels: torch.Tensor):
            for _ in range(1):
                valid = labels != 0
                result = x[valid].sum()
            return result
    """, "NSY503")
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    labels = torch.tensor([1, 0])  # keep row 0
    assert fixed.before["total"](x, labels).item() == 3.0
    assert fixed.after["total"](x, labels).item() == 4.0  # column 0 instead
