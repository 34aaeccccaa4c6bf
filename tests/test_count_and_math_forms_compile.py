"""Issue 18's form e (NSY201: a count under a device condition) and form d2 (NSY202: a
``math`` function of a read appended) compiled with an aot_eager-based backend.

Both rewrites are written for eager training loops, but nothing stops the same lines
from sitting in a compiled function (a compiled step that loops over the parameters'
gradients). There the original breaks the graph at every ``if`` / ``.item()``: Dynamo
gives up on the frame and it runs eagerly (no graph at all); the fixed code is one graph,
reused over calls with other values (no recompile), and returns what the original
returns, eagerly and compiled.
"""

from __future__ import annotations

import textwrap

import pytest

from nosync_fix import fix_code

torch = pytest.importorskip("torch")
from compile_support import GraphCounter, namespace  # noqa: E402
from compile_support import assert_identical as _same  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

pytestmark = pytest.mark.slow

COUNT = textwrap.dedent("""
    import torch

    def run(grads, max_norm):
        clipped = 0
        nans = 0.0
        for grad in grads:
            norm = torch.linalg.vector_norm(grad)
            if norm > max_norm:
                clipped += 1
            if torch.isnan(norm):
                nans += 1
        return clipped, nans
""")

PERPLEXITY = textwrap.dedent("""
    import math

    import torch

    def run(batches):
        ppl = []
        for x in batches:
            loss = x.mean()
            ppl.append(math.exp(loss.item()))
        return ppl
""")


def _count_inputs(seed: int) -> tuple:
    generator = torch.Generator().manual_seed(seed)
    grads = [torch.randn(5, generator=generator) * (k + 1) for k in range(4)]
    if seed % 3 == 0:
        grads[1] = grads[1].clone().fill_(float("nan"))
    return grads, 4.0


def _perplexity_inputs(seed: int) -> tuple:
    generator = torch.Generator().manual_seed(seed)
    return [torch.rand(6, generator=generator) * 3 for _ in range(4)],


def _compiled_runs(code: str, inputs, calls: int = 6):  # type: ignore[no-untyped-def]
    """Run ``code``'s ``run`` compiled over ``calls`` inputs: (results, graphs given to
    the backend, frames Dynamo gave up on for a data-dependent branch or a read, the
    reasons of the graph breaks it made)."""
    torch._dynamo.reset()
    counters.clear()
    backend = GraphCounter()
    compiled = torch.compile(namespace(code)["run"], backend=backend)
    results = [compiled(*inputs(seed)) for seed in range(calls)]
    unsupported = sum(n for reason, n in counters["unimplemented"].items()
                      if "Data-dependent" in reason or "item" in reason)
    return results, backend.graphs, unsupported, set(counters["graph_break"])


@pytest.mark.parametrize(("code", "rule", "inputs", "expected"), [
    (COUNT, "NSY201", _count_inputs, "clipped += (norm > max_norm).long()"),
    (PERPLEXITY, "NSY202", _perplexity_inputs,
     'ppl = [math.exp(x) for x in to_host(ppl, "item")]'),
], ids=["count-under-condition", "math-of-a-read-appended"])
def test_compiled_before_and_after(code, rule, inputs, expected) -> None:  # type: ignore
    fixed = fix_code(code, select=[rule], unsafe_fixes=True, all_paths=True)
    assert fixed.error is None, fixed.error
    assert expected in fixed.fixed, fixed.fixed
    original = namespace(code)["run"]
    rewritten = namespace(fixed.fixed)["run"]
    eager = [original(*inputs(seed)) for seed in range(6)]
    for seed in range(6):
        _same(eager[seed], rewritten(*inputs(seed)))  # eager, fixed
    before, graphs_before, unsupported_before, _ = _compiled_runs(code, inputs)
    after, graphs_after, unsupported_after, breaks = _compiled_runs(fixed.fixed, inputs)
    for seed in range(6):
        _same(eager[seed], before[seed])
        _same(eager[seed], after[seed])
    # The original: Dynamo meets the device read on the first step and runs the frame
    # eagerly; the fixed loop is one graph, not recompiled for other values.
    assert graphs_before == 0 and unsupported_before >= 1
    assert graphs_after == 1, graphs_after
    assert unsupported_after == 0
    # What is left is the one read after the loop: the count's conversion back to a
    # Python number (`int(clipped)`), or the runtime's `to_host`, kept out of graphs.
    expected_break = "Tensor.item()" if rule == "NSY201" else "to_host"
    assert breaks and all(expected_break in reason for reason in breaks), breaks
