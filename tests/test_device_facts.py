"""The device-value facts behind NSY201-NSY204: dtype families, freshness, exact literals."""

from __future__ import annotations

import math
import textwrap

import libcst as cst
import pytest

from nosync_fix.analysis import ModuleAnalysis
from nosync_fix.rules._device import (
    dtype_family,
    float_literal_exact,
    int_literal_small,
    is_fresh,
    is_int64,
    literal_value,
)


def _analysed(source: str) -> tuple[ModuleAnalysis, dict[str, cst.BaseExpression]]:
    """The analysis of ``source`` and the value of every ``probe_<name> = <expr>``."""
    wrapper = cst.MetadataWrapper(cst.parse_module(textwrap.dedent(source)),
                                  unsafe_skip_copy=True)
    analysis = ModuleAnalysis(wrapper)
    probes: dict[str, cst.BaseExpression] = {}

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            target = node.targets[0].target
            if isinstance(target, cst.Name) and target.value.startswith("probe_"):
                probes[target.value[len("probe_"):]] = node.value

    wrapper.module.visit(Finder())
    return analysis, probes


FAMILIES = """
import torch
import torch.nn as nn
import torch.nn.functional as F

def f(model, x, y, mask):
    criterion = nn.CrossEntropyLoss().to("cuda")
    out = model(x)
    loss = criterion(out, y)
    other = model(y)
    other.backward()
    probe_loss = loss
    probe_backward = other
    probe_count = (out.argmax(1) == y).sum()
    probe_any = (out > 0).any()
    probe_mean = F.mse_loss(out, y).mean()
    probe_dtype = torch.zeros(3, dtype=torch.int32)
    probe_half = out.half() * 2
    probe_division = torch.arange(3) / 2
    probe_unknown = model(x)
"""


@pytest.mark.parametrize("probe, family", [
    ("loss", "float"), ("backward", "float"), ("count", "int"), ("any", "bool"),
    ("mean", "float"), ("dtype", "int"), ("half", "float"), ("division", "float"),
    ("unknown", None),
])
def test_dtype_family(probe: str, family: str | None) -> None:
    analysis, probes = _analysed(FAMILIES)
    assert dtype_family(analysis, probes[probe]) == family


def test_int64() -> None:
    analysis, probes = _analysed(FAMILIES)
    assert is_int64(analysis, probes["count"])
    assert not is_int64(analysis, probes["dtype"])  # int32
    assert not is_int64(analysis, probes["loss"])


FRESHNESS = """
import torch

def f(model, loader, optimizer):
    for x in loader:
        out = model(x)
        total = out.sum()
        total.backward()
        probe_total = total
        scaled = out.mean() * 2
        probe_scaled = scaled
        scaled.mul_(3)
        probe_view = out[0]
        probe_sum = out.sum()
        probe_parameter = model.weight
        probe_detached = out.sum().detach()
"""


@pytest.mark.parametrize("probe, fresh", [
    ("total", True),  # used after, but only by .backward()
    ("scaled", False),  # changed in place after it was kept
    ("view", False), ("sum", True), ("parameter", False), ("detached", True),
])
def test_freshness(probe: str, fresh: bool) -> None:
    analysis, probes = _analysed(FRESHNESS)
    expr = probes[probe]
    loop = analysis.loops.enclosing_loop(expr)
    assert loop is not None
    assert is_fresh(analysis, expr, expr, loop) is fresh


@pytest.mark.parametrize("code, value", [
    ("0.0", 0.0), ("-1", -1), ('float("inf")', math.inf), ('-float("inf")', -math.inf),
    ("-math.inf", -math.inf), ("1e9", 1e9), ("x", None), ('float("oops")', None),
])
def test_literal_value(code: str, value: float | None) -> None:
    assert literal_value(cst.parse_expression(code)) == value


@pytest.mark.parametrize("value, exact", [
    (math.inf, True), (-math.inf, True), (0.0, True), (1.0, True), (-2.0, True),
    (0.5, True), (256.0, True), (0.1, False), (1e9, False), (65504.0, False),
    (257.0, False),  # float16 holds it, bfloat16 does not
])
def test_float_literal_exact(value: float, exact: bool) -> None:
    assert float_literal_exact(value) is exact


def test_float_literal_exact_agrees_with_torch() -> None:
    torch = pytest.importorskip("torch")
    for value in (0.0, 1.0, 0.1, 1e9, 65504.0, 257.0, 256.0, 1e-3, 3.0, -7.5):
        held = all(float(torch.tensor(value, dtype=d)) == value
                   for d in (torch.float16, torch.bfloat16, torch.float32, torch.float64))
        assert float_literal_exact(value) is held, value


def test_int_literal_small() -> None:
    assert int_literal_small(0) and int_literal_small(-1) and int_literal_small(127)
    assert not int_literal_small(128) and not int_literal_small(1.0)
