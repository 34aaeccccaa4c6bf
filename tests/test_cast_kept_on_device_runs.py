"""NSY501: values kept on the device give the same results, dtypes and gradients."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from read_rules_support import assert_same_tensor, run_fixed  # noqa: E402

TEMPERATURE = """
import torch


class TemperatureScaling(torch.nn.Module):
    def __init__(self, log_temperature):
        super().__init__()
        self.log_temperature = torch.nn.Parameter(log_temperature)

    def forward(self, logits):
        temperature = self.log_temperature.exp().item()
        return logits / temperature


class Mixed(torch.nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = torch.nn.Parameter(alpha)

    def forward(self, l1, l2):
        alpha = self.alpha.item()
        return alpha * l1 + (1 - alpha) * l2
"""

dtypes = st.sampled_from([torch.float32, torch.float64, torch.float16, torch.bfloat16])
shapes = st.sampled_from([(), (1,), (3,), (2, 3)])


def _same(after, before) -> None:
    assert_same_tensor(after, before, ulps=1)


@settings(max_examples=60, deadline=None)
@given(dtypes, dtypes, shapes, st.sampled_from([(), (1,), (1, 1)]),
       st.floats(-2.0, 2.0))
def test_temperature_scaling_keeps_values_dtypes_and_shapes(param_dtype, logits_dtype,
                                                            logits_shape, param_shape,
                                                            log_t) -> None:
    fixed = run_fixed(TEMPERATURE, "NSY501")
    log_temperature = torch.full(param_shape, log_t, dtype=param_dtype)
    logits = torch.linspace(-3, 3, max(1, torch.Size(logits_shape).numel())).reshape(
        logits_shape).to(logits_dtype)
    before = fixed.before["TemperatureScaling"](log_temperature.clone())(logits)
    after = fixed.after["TemperatureScaling"](log_temperature.clone())(logits)
    _same(after, before)


def test_gradients_do_not_flow_into_the_read_tensor() -> None:
    """`.item()` cut autograd; the kept tensor is detached, so it still does."""
    fixed = run_fixed(TEMPERATURE, "NSY501")
    for namespace in (fixed.before, fixed.after):
        scaler = namespace["TemperatureScaling"](torch.tensor(0.3))
        logits = torch.tensor([1.0, 2.0], requires_grad=True)
        scaler(logits).sum().backward()
        assert scaler.log_temperature.grad is None
        torch.testing.assert_close(logits.grad, torch.full((2,), 0.3).exp().reciprocal())


def test_host_arithmetic_keeps_the_partner_dtype() -> None:
    fixed = run_fixed(TEMPERATURE, "NSY501")
    alpha = torch.tensor([0.25], dtype=torch.float64)
    l1, l2 = torch.tensor(2.0), torch.tensor(4.0)
    before = fixed.before["Mixed"](alpha.clone())(l1, l2)
    after = fixed.after["Mixed"](alpha.clone())(l1, l2)
    _same(after, before)
    assert after.dtype == torch.float32  # a float64 0-dim alpha would have widened it
    assert (alpha * l1).dtype == torch.float64


def test_the_documented_edge_an_integer_partner() -> None:
    """Unsafe when the partner's dtype is unknown: for an integer tensor the Python float
    promoted to float32, the cast to the partner's dtype truncates instead."""
    fixed = run_fixed("""
        import torch

        class Scale(torch.nn.Module):
            def forward(self, counts, factor: torch.Tensor):
                f = factor.item()
                return counts * f
    """, "NSY501")
    counts, factor = torch.tensor([1, 2, 3]), torch.tensor(0.5)
    before = fixed.before["Scale"]()(counts, factor)
    after = fixed.after["Scale"]()(counts, factor)
    assert before.dtype == torch.float32 and before.tolist() == [0.5, 1.0, 1.5]
    assert after.dtype == torch.int64 and after.tolist() == [0, 0, 0]


def test_a_read_before_an_in_place_change_is_a_snapshot() -> None:
    fixed = run_fixed("""
        import torch
        import torch.nn.functional as F

        def step(pred, target):
            for _ in range(1):
                loss = F.mse_loss(pred, target)
                previous = float(loss)
                loss.mul_(0.5)
                l1 = F.l1_loss(pred, target)
                penalty = l1 * previous
            return penalty
    """, "NSY501")
    assert ".clone()" in fixed.after_source
    pred, target = torch.tensor([1.0, 3.0]), torch.tensor([0.0, 0.0])
    _same(fixed.after["step"](pred, target), fixed.before["step"](pred, target))


@settings(max_examples=60, deadline=None)
@given(st.floats(-1e6, 1e6), st.sampled_from([torch.float32, torch.float64]))
def test_int_reads_truncate_towards_zero(value, dtype) -> None:
    fixed = run_fixed("""
        import torch
        import torch.nn.functional as F

        def step(pred, target, scale: torch.Tensor):
            for _ in range(1):
                loss = F.mse_loss(pred, target)
                factor = int(scale)
                weighted = loss * factor
            return weighted
    """, "NSY501")
    pred, target = torch.tensor([1.0, 3.0]), torch.tensor([0.0, 1.0])
    scale = torch.tensor(value, dtype=dtype)
    _same(fixed.after["step"](pred, target, scale), fixed.before["step"](pred, target, scale))
