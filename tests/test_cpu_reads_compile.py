"""What the rules say of a CPU tensor read in ``forward``, checked against torch.compile.

The analysis knows ``torch.randint(...)`` and ``torch.rand([])`` without ``device=`` make
CPU tensors: reading one, or branching on one, waits for no device, and outside code
that torch.compile traces nothing is reported. In ``forward`` NSY906 reports the read,
and NSY103 the branch (transformers' layerdrop), as graph breaks only. Both halves are
checked here: the findings and their wording, and Dynamo's break at that line.
"""

from __future__ import annotations

import textwrap

import pytest

from nosync_fix import check_code

torch = pytest.importorskip("torch")

from compile_support import graph_breaks, namespace  # noqa: E402

#: Compiles with torch._dynamo: `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn


    class RandomDepth(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x):
            self.depth = torch.randint(1, 3, (1,)).item()
            return self.proj(x)


    class LayerDrop(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
            self.layerdrop = 0.5

        def forward(self, x):
            for layer in self.layers:
                dropout_probability = torch.rand([])
                if dropout_probability < self.layerdrop:
                    continue
                x = layer(x)
            return x


    def shuffled(size, epochs):
        order = []
        for _ in range(epochs):
            order.extend(torch.randperm(size).tolist())
        return order
""")


def test_a_cpu_read_in_forward_is_reported_as_a_graph_break_only() -> None:
    findings = [f for f in check_code(SOURCE) if f.code == "NSY906"]
    assert [f.line for f in findings] == [12]  # not the sampler's CPU read (line 32)
    message = findings[0].message
    assert "reads a CPU tensor into a Python number in forward" in message
    assert "the host waits for nothing, but torch.compile breaks the graph" in message


def test_dynamo_breaks_the_graph_at_that_read() -> None:
    module = namespace(SOURCE)["RandomDepth"]()
    assert graph_breaks(module, torch.ones(2, 4)) == 1


def test_a_branch_on_a_cpu_tensor_in_forward_is_reported_as_a_graph_break_only() -> None:
    findings = [f for f in check_code(SOURCE) if f.code == "NSY103"]
    assert [f.line for f in findings] == [25]
    assert findings[0].message.startswith(
        "`if dropout_probability < self.layerdrop:` branches on a CPU tensor (no wait for "
        "the device, but a graph break under torch.compile)")


def test_dynamo_breaks_the_graph_at_that_branch() -> None:
    # In a loop, Dynamo gives up on the whole frame (forward runs eagerly): with
    # fullgraph=True it says why.
    module = namespace(SOURCE)["LayerDrop"]()
    torch._dynamo.reset()
    compiled = torch.compile(module, backend="aot_eager", fullgraph=True)
    with pytest.raises(torch._dynamo.exc.Unsupported, match="[Dd]ata-dependent branching"):
        compiled(torch.ones(2, 4))
