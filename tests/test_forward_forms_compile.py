"""Issue 18's forward forms, rewritten, run before and after: eager and compiled (aot_eager).

- Form c (NSY102, unsafe): an early return on a device condition in a module's forward,
  the module compiled at module level. ``torch.cond`` removes the break; one graph over
  20 calls on both paths; the same outputs and gradients as the original.
- Form f (NSY101, safe since the dtype of a ``nn.Linear`` output is known):
  ``if h.abs().max() > 1e3: h = h.clamp(-1e3, 1e3)``. Bit for bit the same outputs over
  edge values (NaN, inf, -0.0, values at the bound, subnormals) in four float dtypes,
  eager and compiled, and the same gradients.
"""

from __future__ import annotations

import textwrap

import pytest

from nosync_fix import check_code, fix_code
from nosync_fix.findings import Applicability

torch = pytest.importorskip("torch")

from compile_support import GraphCounter, graph_breaks, namespace  # noqa: E402

#: Compiles with torch.compile / torch._dynamo: `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

FORM_C = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Gate(nn.Module):
        def forward(self, y: torch.Tensor):
            score = y.sum()
            if score > 0:
                a = y * 2
                return a
            return y - 1


    model = torch.compile(Gate())
""")

FORM_F = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Bounded(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(1, 1, bias=False)

        def forward(self, x):
            h = self.lin(x)
            if h.abs().max() > 1e3:
                h = h.clamp(-1e3, 1e3)
            return h


    model = torch.compile(Bounded())
""")


def _bits(t: torch.Tensor) -> torch.Tensor:
    ints = {torch.float16: torch.int16, torch.bfloat16: torch.int16,
            torch.float32: torch.int32, torch.float64: torch.int64}
    return t.detach().view(ints[t.dtype])


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(_bits(a), _bits(b))


def _run(module: torch.nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor,
                                                               list[torch.Tensor]]:
    """Output, the input's gradient and the parameters' gradients of ``module(x).sum()``."""
    module.zero_grad(set_to_none=True)
    x = x.detach().clone().requires_grad_(True)
    out = module(x)
    out.sum().backward()
    return out.detach(), x.grad, [p.grad for p in module.parameters()]


def test_form_c_early_return_compiled() -> None:
    fixed = fix_code(FORM_C, select=["NSY102"], unsafe_fixes=True)
    assert fixed.error is None
    assert "return torch.cond(score > 0, _then, _else, (y,))" in fixed.fixed
    # The decorated forward gets the same rewrite.
    decorated = FORM_C.replace("    def forward", "    @torch.compile\n    def forward").replace(
        "model = torch.compile(Gate())\n", "")
    assert fix_code(decorated, select=["NSY102"], unsafe_fixes=True).fixed.replace(
        "    @torch.compile\n", "") == fixed.fixed.replace("model = torch.compile(Gate())\n", "")
    original = namespace(FORM_C)["Gate"]()
    rewritten = namespace(fixed.fixed)["Gate"]()
    positive, negative = torch.linspace(0.5, 2.0, 6), torch.linspace(-2.0, -0.5, 6)
    assert graph_breaks(original, positive) == 1
    assert graph_breaks(rewritten, positive) == 0
    inputs = [positive * (i + 1) if i % 2 else negative * (i + 1) for i in range(20)]
    torch._dynamo.reset()
    counter = GraphCounter()
    compiled = torch.compile(rewritten, backend=counter)
    for x in inputs:
        expected_out, expected_grad, _ = _run(original, x)
        for version in (compiled, rewritten):  # compiled first, then eager torch.cond
            out, grad, _ = _run(version, x)
            assert torch.equal(out, expected_out)
            assert torch.equal(grad, expected_grad)
    assert counter.graphs == 1  # one graph over 20 calls on both paths: no recompile
    assert not torch.equal(_run(original, positive)[1], _run(original, negative)[1])


def _edge_inputs(dtype: torch.dtype) -> list[torch.Tensor]:
    info = torch.finfo(dtype)
    nan, inf = float("nan"), float("inf")
    rows = [
        [1.0, -2.0, 0.5, 3.0, 0.0, -0.0],             # small: not taken
        [1e3, -1e3, 999.0, 0.0, -0.0, 1.0],           # at the bound: not taken (> is strict)
        [1001.0, -5e3, 2.0, -0.0, 0.0, 1e3],          # taken
        [inf, 1.0, -1.0, 0.0, -0.0, 2.0],             # inf: taken, becomes 1e3
        [-inf, inf, 1.0, 0.0, 5.0, -5.0],             # both infinities: taken
        [nan, 1.0, 2.0, 3.0, -0.0, 0.0],              # NaN: max is NaN, NaN > 1e3 is False
        [nan, 5e3, -inf, inf, 1.0, 2.0],              # NaN beside big values: not taken
        [info.tiny / 4, -info.tiny / 4, info.max, -info.max, 0.0, 1.0],  # subnormals, max
    ]
    return [torch.tensor(row, dtype=dtype).reshape(-1, 1) for row in rows]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_form_f_clamp_guard_bit_exact(dtype: torch.dtype) -> None:
    found = check_code(FORM_F, select=["NSY101"])
    assert len(found) == 1 and found[0].fix is not None, found
    assert found[0].fix.applicability is Applicability.SAFE, found[0].message
    fixed = fix_code(FORM_F, select=["NSY101"])
    assert "h = torch.where(h.abs().max() > 1e3, h.clamp(-1e3, 1e3), h)" in fixed.fixed
    original = namespace(FORM_F)["Bounded"]().to(dtype)
    rewritten = namespace(fixed.fixed)["Bounded"]().to(dtype)
    with torch.no_grad():
        original.lin.weight.fill_(1.0)  # h is x, bit for bit (no bias: -0.0 stays -0.0)
    rewritten.load_state_dict(original.state_dict(), strict=True)
    inputs = _edge_inputs(dtype)
    assert graph_breaks(original, inputs[2]) >= 1
    assert graph_breaks(rewritten, inputs[2]) == 0
    torch._dynamo.reset()
    counter = GraphCounter()
    compiled = torch.compile(rewritten, backend=counter)
    calls = [inputs[i % len(inputs)] for i in range(24)]
    for x in calls:
        expected_out, expected_grad, expected_params = _run(original, x)
        for version in (rewritten, compiled):
            out, grad, params = _run(version, x)
            assert _same_bits(out, expected_out), (x.flatten(), out.flatten())
            torch.testing.assert_close(grad, expected_grad, rtol=0, atol=0, equal_nan=True)
            for got, want in zip(params, expected_params, strict=True):
                torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    assert counter.graphs == 1
    # The edges do reach both paths: clamped where taken, untouched (even 5e3) beside NaN.
    taken, beside_nan = original(inputs[3]), original(inputs[6])
    assert taken.max() == 1e3
    assert torch.isnan(beside_nan).any()
    assert ((beside_nan.abs() > 1e3) & torch.isfinite(beside_nan)).any()  # 5e3 kept
