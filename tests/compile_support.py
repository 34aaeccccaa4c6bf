"""What the rewrite tests share: running a fixed source, counting the graphs a backend is
given, counting graph breaks, and comparing results bit for bit. Imported after
``pytest.importorskip("torch")``.
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


def assert_identical(before, after) -> None:  # type: ignore[no-untyped-def]
    """The same types and values to the last bit: floats by their hex form, lists and
    tuples element by element, arrays and tensors with their dtype (NaN equal to NaN in
    arrays)."""
    import numpy as np

    assert type(after) is type(before), (before, after)
    if isinstance(before, (list, tuple)):
        assert len(after) == len(before)
        for b, a in zip(before, after, strict=True):
            assert_identical(b, a)
    elif isinstance(before, float):
        assert after.hex() == before.hex(), (before, after)
    elif isinstance(before, np.ndarray):
        assert before.dtype == after.dtype and np.array_equal(before, after, equal_nan=True)
    elif isinstance(before, torch.Tensor):
        assert before.dtype == after.dtype and torch.equal(before, after)
    else:
        assert after == before, (before, after)
