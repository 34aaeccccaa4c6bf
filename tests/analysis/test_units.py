"""Focused tests of the analysis API that labels on a line cannot express."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest

from nosync_fix.analysis import Kind, ModuleAnalysis
from nosync_fix.analysis.base import Source


def analyse(source: str) -> tuple[ModuleAnalysis, cst.Module]:
    wrapper = cst.MetadataWrapper(cst.parse_module(textwrap.dedent(source)))
    return ModuleAnalysis(wrapper), wrapper.module


def find(module: cst.Module, kind: type, predicate=lambda n: True) -> list:
    found = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, kind) and predicate(node):
                found.append(node)
            return True

    module.visit(Visitor())
    return found


def test_while_test_is_hot_but_for_iterable_is_not() -> None:
    analysis, module = analyse("""
        def f(xs, t):
            for x in xs.tolist():
                pass
            while t.item() > 0:
                pass
    """)
    (tolist,) = find(module, cst.Call, lambda c: getattr(c.func, "attr", None)
                     and c.func.attr.value == "tolist")
    (item,) = find(module, cst.Call, lambda c: getattr(c.func, "attr", None)
                   and c.func.attr.value == "item")
    assert not analysis.is_hot(tolist)
    assert analysis.hot.reason(item) == "in a loop"


def test_comprehension_element_is_hot_but_outer_iterable_is_not() -> None:
    analysis, module = analyse("""
        import torch
        values = [t.item() for t in torch.ones(3).unbind()]
    """)
    (item,) = find(module, cst.Call, lambda c: getattr(c.func, "attr", None)
                   and c.func.attr.value == "item")
    (unbind,) = find(module, cst.Call, lambda c: getattr(c.func, "attr", None)
                     and c.func.attr.value == "unbind")
    assert analysis.is_hot(item)
    assert not analysis.is_hot(unbind)


def test_straight_line_reassignment_hides_earlier_values() -> None:
    analysis, module = analyse("""
        import torch
        def f(batches):
            for t in batches:
                t = torch.as_tensor(t)
                u = t
    """)
    u_value = find(module, cst.Assign)[-1].value
    assert analysis.kind(u_value) is Kind.TENSOR


def test_conditional_reassignment_keeps_both_values() -> None:
    analysis, module = analyse("""
        import torch
        def f(t, flag):
            t = 0.5
            if flag:
                t = torch.ones(1)
            u = t
    """)
    u_value = find(module, cst.Assign)[-1].value
    assert analysis.kind(u_value) is Kind.UNKNOWN


def test_loop_facts() -> None:
    analysis, module = analyse("""
        def f(loader):
            total = 0.0
            for epoch in range(3):
                seen = 0
                for x in loader:
                    total += x
                    seen += 1
                print(seen)
            return total
    """)
    inner = find(module, cst.For)[1]
    outer = find(module, cst.For)[0]
    (aug,) = find(module, cst.AugAssign, lambda a: a.target.value == "total")
    assert analysis.loops.enclosing_loop(aug) is inner
    assert analysis.loops.enclosing_loops(aug) == [inner, outer]
    assert analysis.loops.assigned_names(inner) == {"x", "total", "seen"}
    after = analysis.loops.names_read_after(inner)
    assert {"seen", "print", "total", "loader"} <= after
    first = analysis.loops.first_statement_after(inner)
    assert isinstance(first, cst.SimpleStatementLine)
    assert analysis.md.code(first).strip() == "print(seen)"


def test_torch_name_follows_the_import_alias() -> None:
    analysis, _ = analyse("import torch as T\nx = T.ones(1)\n")
    assert analysis.torch_name() == "T"
    analysis, _ = analyse("import torch.nn.functional as F\nimport torch.nn\n")
    assert analysis.torch_name() == "torch"
    analysis, _ = analyse("from torch import nn\n")
    assert analysis.torch_name() is None


def test_unknown_reads_are_rewritable_only_without_numpy() -> None:
    source = """
        import torch
        {extra}
        def f(model, batch):
            out = model(batch)
            return out.item()
    """
    for extra, expected in (("", True), ("import numpy as np", False)):
        analysis, module = analyse(source.format(extra=extra))
        (call,) = find(module, cst.Call, lambda c: getattr(c.func, "attr", None)
                       and c.func.attr.value == "item")
        assert analysis.tensors.unknown_read_rewritable(call.func.value) is expected


def test_reads_from_foreign_libraries_are_not_rewritable() -> None:
    analysis, module = analyse("""
        import torch
        from sklearn.metrics import accuracy_score
        def f(y, p):
            acc = accuracy_score(y, p)
            return acc.item()
    """)
    (call,) = find(module, cst.Call, lambda c: getattr(c.func, "attr", None)
                   and c.func.attr.value == "item")
    assert not analysis.tensors.unknown_read_rewritable(call.func.value)
    assert analysis.host_read(call) is None


def test_values_cut_from_numpy_arrays_are_not_rewritable() -> None:
    # lerobot's eval split: `.to_numpy()` of a pyarrow column, compared with a loop
    # variable, then `.nonzero()`: a numpy array, which has no `.detach()`.
    analysis, module = analyse("""
        import torch
        def f(dataset, tasks):
            column = dataset.data.column("task_index").to_numpy()
            for t in tasks:
                frames = (column == t).nonzero()[0]
                flags = ~(column != t)
                yield frames.tolist(), flags.tolist()
    """)
    calls = find(module, cst.Call, lambda c: getattr(c.func, "attr", None)
                 and c.func.attr.value == "tolist")
    assert len(calls) == 2
    for call in calls:
        assert not analysis.tensors.unknown_read_rewritable(call.func.value)
        assert analysis.host_read(call) is None


def test_values_derived_from_torch_calls_are_not_foreign() -> None:
    analysis, module = analyse("""
        import torch
        def f(x, model):
            c = torch.argmax(model(x), 1).sum()
            return c.item()
    """)
    (call,) = find(module, cst.Call, lambda c: getattr(c.func, "attr", None)
                   and c.func.attr.value == "item")
    assert analysis.host_read(call) is not None
    chained, _ = analyse("import torch\nt = torch.tensor(1.0).reshape(())\n")
    (assign,) = find(_, cst.Assign)
    assert chained.kind(assign.value) is Kind.TENSOR


def test_nothing_in_a_test_file_is_hot() -> None:
    from nosync_fix.analysis._tables import is_test_file_name

    source = textwrap.dedent("""\
        import torch

        class Model(torch.nn.Module):
            def training_step(self, batch):
                return self(batch).sum()
    """)
    for name, test in [("test_model.py", True), ("tests/model_test.py", True),
                       ("conftest.py", True), ("src\\\\pkg\\\\test_x.py", True),
                       ("model.py", False), ("testing.py", False), ("latest_model.py", False)]:
        assert is_test_file_name(name) is test, name
        wrapper = cst.MetadataWrapper(cst.parse_module(source))
        analysis = ModuleAnalysis(wrapper, test_module=is_test_file_name(name))
        step = wrapper.module.body[1].body.body[0].body.body[0]
        assert analysis.is_hot(step) is not test, name


def test_collator_methods_are_not_hot() -> None:
    # A collator by its own name, by a base's, or by a local base class's; a loader that
    # is not one stays hot in its loop, and so does a model's forward named like one.
    analysis, module = analyse("""
        import torch
        from transformers.data import DataCollatorMixin

        class Loader:
            def size(self, grids):
                for grid in grids:
                    grid.sum().item()

        class TokenCollator(Loader):
            def size(self, grids):
                for grid in grids:
                    grid.sum().item()

        class Spans(DataCollatorMixin):
            def size(self, grids):
                for grid in grids:
                    grid.sum().item()

        class Packing(TokenCollator):
            def size(self, grids):
                for grid in grids:
                    grid.sum().item()

        class EmbeddingCollator(torch.nn.Module):
            def forward(self, grids):
                for grid in grids:
                    grid.sum().item()
    """)
    reads = find(module, cst.Call, lambda c: getattr(c.func, "attr", None)
                 and c.func.attr.value == "item")
    assert [analysis.is_hot(read) for read in reads] == [True, False, False, False, True]


def test_torch_name_sees_an_optional_import() -> None:
    # transformers: `if is_torch_available(): import torch` binds torch for the module.
    analysis, _ = analyse("if is_torch_available():\n    import torch\n")
    assert analysis.torch_name() == "torch"
    analysis, _ = analyse("try:\n    import torch as T\nexcept ImportError:\n    T = None\n")
    assert analysis.torch_name() == "T"


@pytest.mark.parametrize(("source", "mentions"), [
    ('device = torch.device("mps:0")\n', True),
    ("ok = torch.backends.mps.is_available()\n", True),
    ("ok = torch.has_mps\n", True),
    ("def pick(use_mps=False):\n    return 1\n", True),
    ('parser.add_argument("--no-mps", action="store_true")\n', True),
    ("ok = is_mps_available()\n", True),
    ('x = "timestamps"\nlamps = 1\n', False),
    ('device = "cuda" if torch.cuda.is_available() else "cpu"\n', False),
])
def test_mentions_mps_by_word_with_and_without_the_ast(source: str, mentions: bool) -> None:
    """The same answer from LibCST's tree alone (the library API) and from the file's
    ``ast`` (what the engine hands the analysis)."""
    wrapper = cst.MetadataWrapper(cst.parse_module(source))
    assert ModuleAnalysis(wrapper).mentions_mps is mentions
    with_ast = ModuleAnalysis(cst.MetadataWrapper(cst.parse_module(source)),
                              source=Source(ast.parse(source)))
    assert with_ast.mentions_mps is mentions


def _kinds_of_uses(source: str, name: str) -> list[Kind]:
    """The kind of ``name`` in every ``use(name)`` of ``source``, in source order."""
    analysis, module = analyse(source)
    calls = find(module, cst.Call, lambda c: isinstance(c.func, cst.Name)
                 and c.func.value == "use")
    return [analysis.kind(c.args[0].value) for c in calls
            if isinstance(c.args[0].value, cst.Name) and c.args[0].value.value == name]


NARROWING_PROLOGUE = """
    import collections.abc
    import torch

    def f(data, other):
        if isinstance(data, torch.Tensor):
            seen = data.detach()
"""


@pytest.mark.parametrize("body, expected", [
    # The test's body: a number, or a mapping; the use after it is not narrowed.
    ("""
        if isinstance(data, float):
            use(data)
        use(data)
    """, [Kind.HOST, Kind.TENSOR]),
    ("""
        if isinstance(data, collections.abc.Mapping) and other:
            use(data)
    """, [Kind.HOST]),
    # A tuple of types narrows only when each of them does.
    ("""
        if isinstance(data, (int, float, str)):
            use(data)
        if isinstance(data, (int, collections.abc.Iterable)):
            use(data)
    """, [Kind.HOST, Kind.TENSOR]),
    # An assert narrows what follows it in its block, until the name is bound again.
    ("""
        assert isinstance(data, int)
        use(data)
        data = data + other
        use(data)
    """, [Kind.HOST, Kind.TENSOR]),
    # Bound again anywhere in the test's body: not narrowed, even before the binding
    # (a loop brings the binding round to the use).
    ("""
        if isinstance(data, float):
            for _ in range(2):
                use(data)
                data = other
    """, [Kind.TENSOR]),
    # Types a tensor may be an instance of, and a negated test, narrow nothing.
    ("""
        if isinstance(data, collections.abc.Iterable):
            use(data)
        if not isinstance(data, float):
            use(data)
    """, [Kind.TENSOR, Kind.TENSOR]),
    # Where a test of `torch.Tensor` has failed (its `else`, an `elif`, the body of a
    # negated test, the other side of a conditional expression), the name is no tensor:
    # the evidence of the tensor branch does not make it one.
    ("""
        if isinstance(data, torch.Tensor):
            pass
        elif other:
            use(data)
        else:
            use(data)
        if not isinstance(data, (torch.Tensor, float)) and other:
            use(data)
        seen = use(data) if not isinstance(data, torch.Tensor) else data
        seen = data.item() if isinstance(data, torch.Tensor) or other else use(data)
        use(data)
    """, [Kind.UNKNOWN, Kind.UNKNOWN, Kind.UNKNOWN, Kind.UNKNOWN, Kind.UNKNOWN,
          Kind.TENSOR]),
    # A failed test that is not of `torch.Tensor` alone (a subclass, an `and`, an `or`
    # beside the negation): the evidence counts.
    ("""
        if isinstance(data, torch.nn.Parameter):
            pass
        else:
            use(data)
        if isinstance(data, torch.Tensor) and other:
            pass
        else:
            use(data)
        if not isinstance(data, torch.Tensor) or other:
            use(data)
    """, [Kind.TENSOR, Kind.TENSOR, Kind.TENSOR]),
    # Bound again in the other branch, or by the statement that holds the use (its value
    # runs first): still narrowed; bound earlier in the same branch, or in a loop of it
    # around the use: not.
    ("""
        if isinstance(data, torch.Tensor):
            data = data.detach()
        else:
            data = torch.tensor(use(data))
        if not isinstance(data, torch.Tensor):
            data = other
            use(data)
        else:
            for _ in range(2):
                pass
        if not isinstance(data, torch.Tensor):
            while other:
                use(data)
                data = other
    """, [Kind.UNKNOWN, Kind.TENSOR, Kind.TENSOR]),
    # After `assert not isinstance(x, torch.Tensor)`: no tensor.
    ("""
        assert not isinstance(data, torch.Tensor)
        use(data)
    """, [Kind.UNKNOWN]),
])
def test_isinstance_narrows_a_name(body: str, expected: list[Kind]) -> None:
    source = textwrap.dedent(NARROWING_PROLOGUE) + textwrap.indent(
        textwrap.dedent(body), "    ")
    assert _kinds_of_uses(source, "data") == expected


def test_isinstance_narrows_by_paths_types_and_a_tuple_of_types_named_once() -> None:
    # gpt-neox's `isinstance(v1, PRIMITIVE_TYPES)` with `PRIMITIVE_TYPES = (int, float, bool,
    # str, type)`, yolov5's `isinstance(im, (str, Path))`; a name bound twice, or to
    # something else than a tuple, narrows nothing.
    kinds = _kinds_of_uses("""
        from pathlib import Path
        import torch

        PRIMITIVE_TYPES = (int, float, bool, str, type)
        TWICE = (int, float)
        TWICE = (int, torch.Tensor)
        ONE = int

        def f(data, other):
            if isinstance(data, torch.Tensor):
                seen = data.detach()
            if isinstance(data, PRIMITIVE_TYPES):
                use(data)
            if isinstance(data, (str, Path)):
                use(data)
            if isinstance(data, TWICE):
                use(data)
            if isinstance(data, ONE):
                use(data)
    """, "data")
    assert kinds == [Kind.HOST, Kind.HOST, Kind.TENSOR, Kind.TENSOR]


def test_isinstance_does_not_narrow_across_scopes() -> None:
    # A name of the module or of an enclosing function may be bound again by other code
    # (a `global` store, a `nonlocal` one) between the test and the use; a builtin
    # shadowed by the module is not the builtin.
    kinds = _kinds_of_uses("""
        import torch
        data = torch.ones(1).cuda()

        def f():
            if isinstance(data, int):
                use(data)
    """, "data") + _kinds_of_uses("""
        import torch
        float = torch.Tensor

        def g(item):
            seen = item.detach()
            if isinstance(item, float):
                use(item)
            def inner():
                if isinstance(item, int):
                    use(item)
    """, "item")
    assert kinds == [Kind.TENSOR, Kind.TENSOR, Kind.TENSOR]
