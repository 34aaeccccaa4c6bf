"""A method called on the result of a torch function is a method call, not ``torch.<f>.<m>``.

LibCST's QualifiedNameProvider names ``torch.zeros(3).sum`` "torch.zeros.sum"; taken at
its word, the analysis looked that up as a torch function, found nothing and answered
UNKNOWN (and, for effects, an unknown call).
"""

from __future__ import annotations

import libcst as cst
import pytest

from nosync_fix.analysis import Effect, Kind, ModuleAnalysis

SOURCE = """\
import torch
import torch.nn.functional as F


def f(loss, x):
    a = torch.isnan(loss).any()
    b = torch.zeros(3).sum()
    c = F.relu(x).mean()
    d = torch.nn.utils.clip_grad_norm_(x, 1.0)
"""


def _calls(source: str) -> tuple[ModuleAnalysis, dict[str, cst.Call]]:
    wrapper = cst.MetadataWrapper(cst.parse_module(source))
    analysis = ModuleAnalysis(wrapper)
    found: dict[str, cst.Call] = {}

    class Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found[analysis.md.code(node)] = node

    wrapper.module.visit(Collect())
    return analysis, found


@pytest.mark.parametrize("code", ["torch.isnan(loss).any()", "torch.zeros(3).sum()",
                                  "F.relu(x).mean()"])
def test_method_of_a_torch_call_result_is_a_tensor_without_effects(code: str) -> None:
    analysis, calls = _calls(SOURCE)
    call = calls[code]
    assert analysis.md.qualified_names(call.func) == set()
    assert analysis.kind(call) is Kind.TENSOR
    assert analysis.effects.of(call) == Effect.NONE


def test_dotted_names_keep_their_qualified_names() -> None:
    analysis, calls = _calls(SOURCE)
    call = calls["torch.nn.utils.clip_grad_norm_(x, 1.0)"]
    assert analysis.md.qualified_names(call.func) == {"torch.nn.utils.clip_grad_norm_"}
