"""The fixed code no longer waits for the device, and compiles to one graph.

Syncs are counted in eager mode with a TorchDispatchMode (the ops that copy a device
value to the host: ``_local_scalar_dense`` behind ``.item()``/``bool()``/``float()``,
``nonzero`` behind boolean indexing, ``equal``); graph breaks with
``torch._dynamo.explain``. On the CPU nothing actually waits, but the same ops are the
ones that wait on an accelerator. (The snippets have no loop: a graph break inside a
loop makes dynamo skip the whole frame, and explain() would see no graph at all.)
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from read_rules_support import run_fixed  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

_SYNC_OPS = {"_local_scalar_dense", "nonzero", "equal", "is_nonzero", "masked_select",
             "_unique2", "unique_dim", "item"}


class _CountSyncs(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if name in _SYNC_OPS or (name == "index" and any(
            isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in args[1]
        )):  # x[mask]: the mask's nonzero runs inside the index kernel
            self.count += 1
        return func(*args, **(kwargs or {}))


def _syncs(function, *args) -> int:
    with _CountSyncs() as counter:
        function(*args)
    return counter.count


def _breaks(function, *args) -> int:
    torch._dynamo.reset()
    return torch._dynamo.explain(function)(*args).graph_break_count


CASES = {
    "NSY401": ("""
        import torch

        def step(x: torch.Tensor):
            loss = (x * 2).mean()
            assert loss.item() > -1, "negative"
            return loss + 1

        # A hot path (asserts elsewhere keep AssertionError); compiled lazily, never run.
        compiled_step = torch.compile(step)
    """, (torch.ones(4),)),
    "NSY501": ("""
        import torch
        import torch.nn.functional as F

        def step(x: torch.Tensor, y: torch.Tensor):
            loss = F.mse_loss(x, y)
            aux = F.l1_loss(x, y)
            weight = loss.item()
            total = aux * weight
            return total + 1
    """, (torch.ones(4), torch.zeros(4))),
    "NSY502": ("""
        import math
        import torch
        import torch.nn.functional as F

        def step(x: torch.Tensor, y: torch.Tensor):
            loss = F.mse_loss(x, y)
            aux = F.l1_loss(x, y)
            total = aux * math.exp(-loss.item())
            return total + 1
    """, (torch.ones(4), torch.zeros(4))),
    "NSY503": ("""
        import torch

        def step(x: torch.Tensor):
            positive = x[x > 0].sum()
            count = len(x[x > 0])
            mean = x.sum() / count
            return positive + mean
    """, (torch.tensor([1.0, -2.0, 3.0]),)),
    "NSY504": ("""
        import torch

        def step(x: torch.Tensor, y: torch.Tensor):
            gated = x * torch.equal(x.sign(), y.sign())
            return gated + 1
    """, (torch.ones(4), torch.ones(4))),
}


@pytest.mark.parametrize("code", sorted(CASES))
def test_the_fix_removes_every_sync(code: str) -> None:
    source, args = CASES[code]
    fixed = run_fixed(source, code)
    assert _syncs(fixed.before["step"], *args) >= 1
    assert _syncs(fixed.after["step"], *args) == 0


@pytest.mark.slow
@pytest.mark.parametrize("code", sorted(CASES))
def test_the_fix_removes_every_graph_break(code: str) -> None:
    source, args = CASES[code]
    fixed = run_fixed(source, code)
    assert _breaks(fixed.before["step"], *args) >= 1
    assert _breaks(fixed.after["step"], *args) == 0
