"""What the compiled-rewrite tests share: running a fixed source, counting the graphs a
backend is given, and counting graph breaks. Imported after ``pytest.importorskip("torch")``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch


def namespace(code: str) -> dict:
    """The globals of ``code`` once run."""
    found: dict = {}
    exec(compile(code, "<code>", "exec"), found)
    return found


class GraphCounter:
    """A backend that counts the graphs it is given (a recompile is one more)."""

    def __init__(self) -> None:
        self.graphs = 0

    def __call__(self, gm, example_inputs):  # type: ignore[no-untyped-def]
        self.graphs += 1
        from torch._dynamo.backends.common import aot_autograd
        from torch._functorch.aot_autograd import make_boxed_func

        return aot_autograd(fw_compiler=lambda g, _: make_boxed_func(g.forward),
                            bw_compiler=lambda g, _: make_boxed_func(g.forward))(
            gm, example_inputs)


def graph_breaks(fn: Callable, *args) -> int:  # type: ignore[no-untyped-def]
    """Dynamo's graph-break count for one call of ``fn``, from a fresh cache."""
    torch._dynamo.reset()
    return torch._dynamo.explain(fn)(*args).graph_break_count
