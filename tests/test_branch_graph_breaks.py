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

#: Compiles with torch.compile / torch._dynamo: `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

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


    compiled_clip = torch.compile(clip)  # NSY102 rewrites compiled code only
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


class _HostReads(torch.overrides.TorchFunctionMode):
    """Counts the tensor methods that hand a device value to Python (each a sync on CUDA)."""

    READS = frozenset({"item", "tolist", "__bool__", "__float__", "__int__", "__index__"})

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        if getattr(func, "__name__", "") in self.READS:
            self.count += 1
        return func(*args, **(kwargs or {}))


def test_where_rewrite_reads_nothing_on_the_host() -> None:
    fixed = fix_code(WHERE, select=["NSY101"], unsafe_fixes=True, all_paths=True).fixed
    counts = []
    for code in (WHERE, fixed):
        with _HostReads() as reads:
            _function(code, "step")(torch.linspace(-2, 2, 16), 1.0)
        counts.append(reads.count)
    assert counts[0] == 2 and counts[1] == 0, counts
