"""NSY401: the rewritten asserts check the same conditions, on real tensors."""

from __future__ import annotations

import functools

import pytest

torch = pytest.importorskip("torch")
from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from read_rules_support import run_fixed  # noqa: E402

ASSERTS = [
    'not torch.isnan(x).any(), "nan"',
    '(x >= -1).all() and (x <= 1).all(), "range"',
    '-1 <= x.min().item() <= 1',
    'not (x > 1).any() or torch.isnan(y).all()',
    'torch.equal(x, y), "different"',
    'torch.allclose(x, y, atol=0.1)',
    'math.isfinite(x.max().item())',
    'int(x.sum()) <= 1',
    'x.max().item() > 0.5',
]
CONDITIONS = """
import math

import torch


class Checks(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> None:
""" + "".join(f"""        if self.which == {i}:
            assert {condition}
""" for i, condition in enumerate(ASSERTS)) + """

def check(which, x, y):
    checks = Checks()
    checks.which = which
    checks(x, y)
"""

numbers = st.floats(min_value=-2.0, max_value=2.0) | st.sampled_from(
    [float("nan"), float("inf"), 1.0, 0.5, -1.0])


@functools.cache
def _conditions():
    return run_fixed(CONDITIONS, "NSY401")


def _outcome(check, which, x, y):
    try:
        check(which, x, y)
    except (AssertionError, RuntimeError) as error:
        return type(error).__name__, str(error)
    except (ValueError, OverflowError) as error:  # int(nan), int(inf)
        return type(error).__name__, str(error)
    return None


def test_every_assert_is_rewritten() -> None:
    assert _conditions().after_source.count("_assert_async(") == len(ASSERTS)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(ASSERTS) - 1), st.lists(numbers, min_size=1, max_size=4),
       st.data())
def test_the_rewritten_conditions_fail_exactly_when_the_originals_do(which, data,
                                                                    draw) -> None:
    fixed = _conditions()
    x = torch.tensor(data, dtype=torch.float64)
    same = draw.draw(st.booleans())
    y = x.clone() if same else torch.tensor(
        draw.draw(st.lists(numbers, min_size=len(data), max_size=len(data))),
        dtype=torch.float64)
    before = _outcome(fixed.before["check"], which, x, y)
    # Inputs the original rejects with another error (int() of NaN) are outside the contract.
    assume(before is None or before[0] == "AssertionError")
    after = _outcome(fixed.after["check"], which, x, y)
    assert (before is None) == (after is None), (ASSERTS[which], data, before, after)
    if before is not None:
        # The documented difference: a RuntimeError with the same message, not an
        # AssertionError.
        assert before[0] == "AssertionError" and after[0] == "RuntimeError"
        if before[1]:
            assert after[1] == before[1]


def test_a_failure_raises_runtime_error_with_the_message() -> None:
    fixed = run_fixed("""
        import torch

        def train_step(x):
            loss = x.mean()
            for _ in range(1):
                assert torch.isfinite(loss), "loss is not finite"
            return loss
    """, "NSY401")
    good = torch.ones(3)
    assert fixed.before["train_step"](good) == fixed.after["train_step"](good)
    bad = torch.tensor([float("inf")])
    with pytest.raises(AssertionError, match="loss is not finite"):
        fixed.before["train_step"](bad)
    with pytest.raises(RuntimeError, match="loss is not finite"):
        fixed.after["train_step"](bad)


def test_python_dash_o_still_removes_the_check() -> None:
    fixed = run_fixed("""
        import torch

        def train_step(x: torch.Tensor):
            for _ in range(1):
                assert (x > 0).all(), "negative"
            return x
    """, "NSY401", optimize=1)
    negative = torch.tensor([-1.0])
    assert fixed.before["train_step"](negative) is negative
    assert fixed.after["train_step"](negative) is negative
    assert "if __debug__:" in fixed.after_source


def test_comparison_with_a_float_happens_in_the_tensor_precision() -> None:
    """The documented edge: `t.item() > 0.1` compares in float64, `t > 0.1` in float32."""
    fixed = run_fixed("""
        import torch

        def train(t: torch.Tensor):
            for _ in range(1):
                assert t.item() > 0.1
    """, "NSY401")
    t = torch.tensor(0.1)  # float32(0.1) is slightly more than the float64 0.1
    fixed.before["train"](t)
    with pytest.raises(RuntimeError):
        fixed.after["train"](t)


CHECK_SCRIPT = '''
import torch


def train_step(model, x):
    out = model(x)
    assert torch.isfinite(out).all(), "diverged"
    return out


def run_checks(model, batches):
    for x in batches:
        assert torch.isfinite(model(x)).all(), "diverged"


def outcome(function, *args):
    try:
        function(*args)
    except AssertionError as error:
        return "AssertionError", str(error)
    except RuntimeError as error:
        return "RuntimeError", str(error)
    return None
'''


@pytest.mark.parametrize("filename", ["tests/helpers.py", "check_model.py",
                                      "src/pkg/testing/utils.py", "verify_export.py"])
def test_checking_code_keeps_assertion_error(filename: str) -> None:
    """Issue 20: in a test helper or a check script the assert is the check; after the
    fixer runs, a failing check still raises AssertionError (in a training module the
    same function gets the fix, and a RuntimeError)."""
    import textwrap

    from nosync_fix import fix_code

    source = textwrap.dedent(CHECK_SCRIPT)
    model = torch.nn.Linear(2, 2)
    with torch.no_grad():
        model.weight.fill_(float("nan"))
    batches = [torch.ones(2)]
    checked = fix_code(source, filename=filename, select=["NSY401"], unsafe_fixes=True)
    assert checked.fixed == source
    namespace: dict = {}
    exec(compile(checked.fixed, filename, "exec"), namespace)
    assert namespace["outcome"](namespace["run_checks"], model, batches) == (
        "AssertionError", "diverged")
    trained = fix_code(source, filename="train.py", select=["NSY401"], unsafe_fixes=True)
    assert trained.fixed.count("_assert_async(") == 2
    namespace = {}
    exec(compile(trained.fixed, "train.py", "exec"), namespace)
    assert namespace["outcome"](namespace["train_step"], model, batches[0])[0] == (
        "RuntimeError")
