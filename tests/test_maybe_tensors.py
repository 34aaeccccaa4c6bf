"""``MaybeTensors`` must say "maybe" wherever the analysis says tensor (or module),
and wherever the rules take an index for a boolean mask.

Checked on every expression of every golden input, labelled file and example, and
on generated training programs: each LibCST expression the analysis calls
``Value.TENSOR`` (``Value.MODULE``) is matched, by its source range, with the
``ast`` node of the same kind, which must be a possible tensor (module). Plus
small cases for what the over-approximation rules out, and the budget.
"""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from libcst.metadata import PositionProvider
from test_prefilter import _IDS, CORPUS
from torch_programs import torch_programs

from nosync_fix import maybe_tensors
from nosync_fix.analysis import ModuleAnalysis, Value
from nosync_fix.maybe_tensors import MaybeTensors
from nosync_fix.rules._device import dtype_family

_SAME: dict[type, tuple[type, ...]] = {
    cst.Name: (ast.Name,), cst.Attribute: (ast.Attribute,), cst.Call: (ast.Call,),
    cst.Subscript: (ast.Subscript,), cst.BinaryOperation: (ast.BinOp,),
    cst.UnaryOperation: (ast.UnaryOp,), cst.Comparison: (ast.Compare,),
    cst.BooleanOperation: (ast.BoolOp,), cst.IfExp: (ast.IfExp,),
    cst.NamedExpr: (ast.NamedExpr,),
}


def _char_column(lines: list[str], line: int, byte_column: int) -> int:
    """``ast`` counts columns in UTF-8 bytes, LibCST in characters."""
    return len(lines[line - 1].encode("utf-8")[:byte_column].decode("utf-8"))


def _claims_hold(source: str) -> int:
    """Every TENSOR (MODULE) of the analysis is a possible tensor (module) here, and
    every index that the rules' ``dtype_family`` calls boolean may be boolean here."""
    tree = ast.parse(source)
    lines = source.splitlines()
    by_range: dict[tuple[int, int, int, int], list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.expr):
            key = (node.lineno, _char_column(lines, node.lineno, node.col_offset),
                   node.end_lineno, _char_column(lines, node.end_lineno,  # type: ignore
                                                 node.end_col_offset))  # type: ignore
            by_range.setdefault(key, []).append(node)  # type: ignore[arg-type]
    maybe = MaybeTensors(tree)
    wrapper = cst.MetadataWrapper(cst.parse_module(source))
    analysis = ModuleAnalysis(wrapper)
    checked = 0
    for node, rng in wrapper.resolve(PositionProvider).items():
        kinds = _SAME.get(type(node))
        if kinds is None:
            continue
        value = analysis.tensors.value(node)
        if value not in (Value.TENSOR, Value.MODULE):
            continue
        key = (rng.start.line, rng.start.column, rng.end.line, rng.end.column)
        for match in by_range.get(key, []):
            if not isinstance(match, kinds):
                continue
            checked += 1
            answer = maybe.tensor(match) if value is Value.TENSOR else maybe.module(match)
            assert answer, (f"{analysis.md.code(node)!r} at line {rng.start.line} is "
                            f"{value.name} for the analysis but not for MaybeTensors")
            assert maybe.device(match) or value is Value.MODULE
    positions = wrapper.resolve(PositionProvider)
    for node in positions:
        if not (isinstance(node, cst.Subscript) and len(node.slice) == 1
                and isinstance(node.slice[0].slice, cst.Index)):
            continue
        index = node.slice[0].slice.value
        if dtype_family(analysis, index) != "bool":
            continue
        rng = positions[index]
        key = (rng.start.line, rng.start.column, rng.end.line, rng.end.column)
        for match in by_range.get(key, []):
            if isinstance(match, _SAME.get(type(index), ())):
                checked += 1
                assert maybe.may_be_bool(match), (
                    f"{analysis.md.code(index)!r} at line {rng.start.line} is a boolean mask "
                    "for the rules but not for MaybeTensors")
    return checked


@pytest.mark.parametrize("path", CORPUS, ids=_IDS)
def test_every_tensor_of_the_analysis_may_be_one(path: Path) -> None:
    _claims_hold(path.read_text(encoding="utf-8"))


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(torch_programs())
def test_every_tensor_may_be_one_in_generated_programs(source: str) -> None:
    _claims_hold(source)


def test_the_check_is_not_vacuous() -> None:
    assert sum(_claims_hold(p.read_text(encoding="utf-8")) for p in CORPUS) > 1000


def _facts_and_last(source: str, expression: str) -> tuple[MaybeTensors, ast.expr]:
    """The facts of ``source`` followed by ``expression``, and that expression's node."""
    tree = ast.parse(source + "\n" + expression + "\n")
    last = tree.body[-1]
    assert isinstance(last, ast.Expr)
    return MaybeTensors(tree), last.value


def _ask(source: str, expression: str) -> bool:
    """Whether the last statement's expression (``expression``) may be a tensor."""
    facts, node = _facts_and_last(source, expression)
    return facts.tensor(node)


@pytest.mark.parametrize(("source", "expression"), [
    ("import torch\nx = torch.zeros(3)", "x > 0"),
    ("import torch.nn.functional as F\ny = F.relu(z)", "y.sum()"),
    ("from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n"
     "        self.fc = nn.Linear(2, 2)\n    def forward(self, x):\n        return x",
     "self.fc(x)"),
    ("loss = compute()\nloss.backward()", "loss"),  # evidence of use
    ("x = g()\ny = F.relu(x)\nimport torch.nn.functional as F", "x"),  # import after
    ("class M:\n    def __init__(self):\n        self.register_buffer('m', t)", "self.m"),
    ("t: torch.Tensor", "t"),
    ("def make():\n    return torch.ones(1)\nimport torch", "make()"),
    ("a = torch.ones(1)\nb = a\nc = b", "c"),
    ("for p in model.parameters():\n    pass", "p"),
    ("x, y = torch.ones(1), 2", "x"),
    ("from torch import nn\nm = nn.Linear(2, 2)", "m.weight"),
    ("from torch import nn\nm = nn.Linear(2, 2).cuda()", "m(x)"),
    ("from torch.nn import init\nw = init.orthogonal_(m.weight)", "w > 0"),
])
def test_maybe(source: str, expression: str) -> None:
    assert _ask(source, expression)


@pytest.mark.parametrize(("source", "expression"), [
    ("x = 3", "x > 0"),
    ("class M:\n    def __init__(self):\n        self.fused = use_fused()", "self.fused"),
    ("import torch\nx = torch.zeros(3)", "x.shape[0] > 2"),
    ("import torch\nx = torch.zeros(3)", "x.dim() == 2"),
    ("import torch\nx = torch.zeros(3)", "x in xs"),
    ("import torch\nx = torch.zeros(3)", "x is None"),
    ("import torch\nx = torch.zeros(3)", "x == 'text'"),
    ("import torch\nx = torch.zeros(3)", "x.item()"),
    ("def f(group):\n    pass", "group['weight_decay'] != 0"),
    ("import torch\nx = torch.zeros(3)", "x > 0 or flag"),  # a join: not all parts
    ("for k in d:\n    pass", "k"),
    ("import re\nm = re.match('a', 'b')", "int(m.group(1))"),
    ("from typing import Dict\nimport torch", "Dict[str, torch.Tensor]"),
    # Weight initialisation's fans and gains are Python numbers.
    ("from torch.nn import init\nfan_in, _ = init._calculate_fan_in_and_fan_out(w)",
     "fan_in > 0"),
    ("import torch\ngain = torch.nn.init.calculate_gain('relu')", "gain > 1"),
    ("from torch import nn\nfan = nn.init._calculate_correct_fan(w, 'fan_in')", "fan > 1"),
])
def test_not_a_tensor(source: str, expression: str) -> None:
    assert not _ask(source, expression)


def _returned(source: str) -> bool:
    """Whether the value of the last ``return`` of ``source`` may be a tensor."""
    tree = ast.parse(source)
    value = [n for n in ast.walk(tree) if isinstance(n, ast.Return)][-1].value
    assert value is not None
    return MaybeTensors(tree).tensor(value)


@pytest.mark.parametrize(("source", "tensor"), [
    # A name is looked up where Python looks it up.
    ("import torch\ndef f():\n    k = torch.ones(1)\ndef g(k):\n    return k", False),
    ("import torch\nk = torch.ones(1)\ndef g():\n    return k", True),
    ("import torch\nk = torch.ones(1)\ndef g():\n    k = 2\n    return k", False),
    ("import torch\nx = torch.ones(1)\ndef f():\n    ys = [x for x in range(3)]\n"
     "    return x", True),  # the comprehension's x is its own
    ("import torch\ndef f():\n    k = torch.ones(1)\n    def g():\n        return k", True),
    ("import torch\nclass A:\n    k = torch.ones(1)\n    def f(self):\n        return k",
     False),  # a class body's names are not seen by its methods
    ("import torch\ndef f():\n    global k\n    k = torch.ones(1)\ndef g():\n"
     "    return k", True),
    ("def f(x):\n    x.backward()\ndef g(x):\n    return x", False),  # evidence is per scope
    ("def f(x):\n    x.backward()\n    return x", True),
    ("import torch\ndef f():\n    for i, x in enumerate(torch.ones(3)):\n        return i",
     False),  # enumerate counts
    ("import torch\ndef f(xs: list[torch.Tensor], ys):\n"
     "    for i, (x, y) in enumerate(zip(xs, ys)):\n        return x", True),
    ("import torch\nenumerate = torch.split\ndef f():\n"
     "    for i, x in enumerate(torch.ones(3)):\n        return i", True),  # not the builtin
])
def test_scopes(source: str, tensor: bool) -> None:
    assert _returned(source) is tensor


@pytest.mark.parametrize(("expression", "device"), [
    ("x > 0 or flag", True),  # one part may be a tensor
    ("n.item() is None", True),  # a read, whatever it is compared with
    ("len(x.tolist()) > 2", True),
    ("len(x) > 2", False),  # host values whatever x is
    ("x.shape[0] != n or x.dim() == 4", False),
    ("x in xs or x is None", False),
])
def test_device(expression: str, device: bool) -> None:
    tree = ast.parse("import torch\nx = torch.zeros(3)\nflag = True\n" + expression + "\n")
    last = tree.body[-1]
    assert isinstance(last, ast.Expr)
    assert MaybeTensors(tree).device(last.value) is device


def test_an_attribute_assigned_a_tensor_may_be_one_whatever_its_name() -> None:
    tree = ast.parse("import torch\nself.shape = torch.ones(2)\nself.shape\n")
    assert MaybeTensors(tree).device(tree.body[-1].value)  # type: ignore[attr-defined]


def test_parameters_of_forward_and_compiled_functions_are_model_arguments() -> None:
    tree = ast.parse("def forward(self, x):\n    return x\n"
                     "def g(y):\n    return y\n"
                     "def h(z):\n    return z\n")
    maybe = MaybeTensors(tree, model_functions=("forward", "g"))
    returned = [n.value for n in ast.walk(tree) if isinstance(n, ast.Return)]
    assert [maybe.model_argument(v) for v in returned] == [True, True, False]  # type: ignore
    assert not maybe.tensor(returned[0])  # type: ignore[arg-type]  # presumed, not known


def test_over_budget_means_maybe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(maybe_tensors, "_BUDGET", 3)
    chain = "\n".join(f"x{i + 1} = x{i}" for i in range(20))
    assert _ask("x0 = 1\n" + chain, "x20 > 0")


@pytest.mark.parametrize(("source", "expression", "expected"), [
    ("import torch\nx = torch.ones(3)", "x > 0", True),
    ("m = a > b", "m", True),
    ("m = a > b\nn = ~m & (c != 0)", "n", True),
    ("m = a > b", "m[0].data", True),
    ("", "t.isnan()", True),
    ("import torch", "torch.isfinite(t)", True),
    ("m = t > 0", "m.view(-1)", True),
    ("import torch", "torch.zeros(3, dtype=torch.bool)", True),
    ("", "t.view(-1)", False),
    ("idx = t.argmax(1)", "idx", False),
    ("for m in masks:\n    pass", "m", False),
    ("", "x is None", False),
    ("", "a > b in c", False),
    ("m = t > 0", "m + 1", False),
    ("m = m & k", "m", False),
])
def test_what_may_be_a_boolean_mask(source: str, expression: str, expected: bool) -> None:
    facts, node = _facts_and_last(source, expression)
    assert facts.may_be_bool(node) is expected


@pytest.mark.parametrize(("source", "expression", "expected"), [
    ("import logging", "logging", True),
    ("import logging as lg", "lg", True),
    ("import logging\nlog = logging.getLogger(__name__)", "log", True),
    ("import logging\nlog = logging.getLogger()\nother = log", "other", True),
    ("import logging", "logging.root", True),
    ("class M:\n    def f(self):\n        pass", "self", False),
    ("def f(writer):\n    pass", "writer", False),
    ("bar = tqdm(range(3))", "bar", False),
])
def test_what_may_be_a_logger(source: str, expression: str, expected: bool) -> None:
    facts, node = _facts_and_last(source, expression)
    assert facts.may_be_logger(node) is expected
