"""NSY502: math moved onto the device gives the values math gave, in the partner's dtype."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from read_rules_support import assert_same_tensor, run_fixed  # noqa: E402

SOURCE = """
import math

import torch


class Model(torch.nn.Module):
    def forward(self, x, t: torch.Tensor, eps: float):
        scale = math.exp(t.item())
        root = x * math.sqrt(abs(t).item() + eps)
        damped = (1 - math.exp(-float(t))) * x
        return x * scale, root, damped


class Logs(torch.nn.Module):
    def forward(self, x, t: torch.Tensor):
        return x * math.log(t.item())
"""


def _close(after, before) -> None:
    """Same dtype and shape; values within one unit in the last place (torch's and libm's
    float64 exp, log and sqrt may differ by one ulp before the cast), plus an absolute
    few eps: `1 - exp(-t)` near t = 0 cancels, turning an ulp of exp(-t) ≈ 1 into an
    absolute error of about eps (hypothesis found t = 0.125: 9e-16 relative)."""
    assert after.dtype == before.dtype and after.shape == before.shape
    eps = torch.finfo(before.dtype).eps
    torch.testing.assert_close(after, before, rtol=2 * eps, atol=4 * eps, equal_nan=True)


@settings(max_examples=80, deadline=None)
@example(0.125, torch.float32, torch.float64, (), ())  # cancellation in 1 - exp(-t)
@given(st.floats(-20.0, 20.0), st.sampled_from([torch.float32, torch.float64, torch.float16]),
       st.sampled_from([torch.float32, torch.float64, torch.bfloat16]),
       st.sampled_from([(), (1,), (2, 2)]), st.sampled_from([(), (1,)]))
def test_the_device_math_agrees_with_math(value, t_dtype, x_dtype, x_shape, t_shape) -> None:
    fixed = run_fixed(SOURCE, "NSY502")
    assert fixed.after_source.count("torch.exp(") == 2 and "torch.sqrt(" in fixed.after_source
    assert "import math" not in fixed.after_source  # every use moved to the device
    t = torch.full(t_shape, value, dtype=t_dtype)
    x = torch.linspace(0.5, 2.0, max(1, torch.Size(x_shape).numel())).reshape(x_shape).to(
        x_dtype)
    before = fixed.before["Model"]()(x, t, 1e-3)
    after = fixed.after["Model"]()(x, t, 1e-3)
    for a, b in zip(after, before, strict=True):
        _close(a, b)


def test_domain_errors_become_values() -> None:
    """The documented edge: math raises where torch gives -inf, nan or inf."""
    fixed = run_fixed(SOURCE, "NSY502")
    x = torch.ones(2)
    with pytest.raises(ValueError):
        fixed.before["Logs"]()(x, torch.tensor(0.0))
    assert fixed.after["Logs"]()(x, torch.tensor(0.0)).tolist() == [-math.inf, -math.inf]
    with pytest.raises(OverflowError):
        fixed.before["Model"]()(x, torch.tensor(1000.0), 0.0)
    scaled, _, _ = fixed.after["Model"]()(x, torch.tensor(1000.0), 0.0)
    assert scaled.tolist() == [math.inf, math.inf]


def test_float32_overflow_range_is_kept() -> None:
    """exp(100) overflows float32 but not float64: both versions give inf only after the
    cast to the partner's dtype, and a float64 partner keeps the finite value."""
    fixed = run_fixed(SOURCE, "NSY502")
    t = torch.tensor(100.0)
    for dtype in (torch.float32, torch.float64):
        x = torch.ones(1, dtype=dtype)
        before, _, _ = fixed.before["Model"]()(x, t, 0.0)
        after, _, _ = fixed.after["Model"]()(x, t, 0.0)
        _close(after, before)
    assert_same_tensor(torch.exp(t.double()).to(torch.float32), torch.tensor(math.inf))
