"""The rewritten branches compile without graph breaks where the originals had some.

Counted with ``torch._dynamo.explain``; the rewritten function then compiles with
``fullgraph=True`` on the ``aot_eager`` backend (which raises on any break) and
returns what the original returns on both paths.
"""

from __future__ import annotations

import textwrap

import pytest

from nosync_fix import fix_code

torch = pytest.importorskip("torch")

WHERE = textwrap.dedent("""
    import torch


    def step(x: torch.Tensor, limit: float):
        h = torch.tanh(x) * 3
        if h.abs().max().item() > limit:
            h = h * 0.5
        scale = h if h.sum() > 0 else -h
        return scale + 1
""")

COND = textwrap.dedent("""
    import torch


    def clip(x: torch.Tensor, max_norm: float):
        norm = x.norm()
        if norm > max_norm:
            scale = max_norm / norm
            x = x * scale
        return x * 2
""")


def _function(code: str, name: str):
    namespace: dict = {}
    exec(compile(code, "<code>", "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize(("code", "name", "expect"), [
    (WHERE, "step", "torch.where"),
    (COND, "clip", "torch.cond"),
])
def test_rewrite_removes_graph_breaks(code: str, name: str, expect: str) -> None:
    fixed = fix_code(code, select=["NSY101", "NSY102"], unsafe_fixes=True, all_paths=True)
    assert fixed.error is None and expect in fixed.fixed
    original, rewritten = _function(code, name), _function(fixed.fixed, name)
    x = torch.linspace(-2, 2, 16)

    torch._dynamo.reset()
    before = torch._dynamo.explain(original)(x, 1.0)
    torch._dynamo.reset()
    after = torch._dynamo.explain(rewritten)(x, 1.0)
    assert before.graph_break_count > 0
    assert after.graph_break_count == 0, [r.reason for r in after.break_reasons]
    assert after.graph_count == 1

    torch._dynamo.reset()
    compiled = torch.compile(rewritten, backend="aot_eager", fullgraph=True)
    for scale in (0.01, 1.0, 10.0):  # both paths; the limit stays constant (see NSY102's page)
        torch.testing.assert_close(compiled(x * scale, 1.0), original(x * scale, 1.0),
                                   rtol=0, atol=0)
    torch._dynamo.reset()
