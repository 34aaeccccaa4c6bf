"""Which rule owns a read: the contexts that each rule family reports.

A read (``t.item()``, ``float(t)``, ``t.tolist()``...) is reported once, by the
rule that knows what to do with it in its context. The catch-all rules
(NSY502 for host math, NSY903 for transfers, NSY905 for reads in compiled
functions) ask :func:`owner` first and stay silent when another rule owns the
context. The contexts, nearest enclosing first, within the read's statement:

=========  ===============================================================
NSY101     the test of an ``if``/``elif``/``while`` or a conditional expression
NSY201     the increment of an accumulation: ``acc += ...``, ``acc = acc + ...``
NSY202     an argument of ``.append(...)``/``.extend(...)``
NSY203     an argument of the builtins ``max(...)``/``min(...)``
NSY301     an argument of ``print(...)``
NSY302     an argument of a logging call (``logging.info``, ``logger.warning``,
           ``pbar.set_postfix``...)
NSY303     an argument of a metric writer (``writer.add_scalar``, ``self.log``,
           ``wandb.log``...)
NSY401     an ``assert`` statement (its message is evaluated only on failure)
=========  ===============================================================

Two more owners depend on the read itself and are checked by the rules that
need them: a read that is a direct operand of arithmetic with a tensor (NSY204,
:func:`is_stop_gradient_operand`) and a read that feeds a shape (NSY902).
"""

from __future__ import annotations

import libcst as cst

from ..analysis import Kind, ModuleAnalysis
from ..analysis.base import call_name
from ._scalars import TENSOR_ARITHMETIC, is_model_argument

_LOGGING_METHODS = frozenset({
    "debug", "info", "warning", "warn", "error", "critical", "exception", "set_postfix",
    "set_postfix_str", "set_description", "set_description_str", "write",
})
_METRIC_METHODS = frozenset({
    "add_scalar", "add_scalars", "add_histogram", "log", "log_dict", "log_metric",
    "log_metrics", "update",
})
_STATEMENTS = (cst.BaseSmallStatement, cst.BaseCompoundStatement)


def owner(analysis: ModuleAnalysis, node: cst.CSTNode) -> str | None:
    """The code of the rule family that reports a read at ``node``, from its context."""
    md = analysis.md
    child: cst.CSTNode = node
    for parent in md.ancestors(node):
        if isinstance(parent, (cst.If, cst.While)):
            return "NSY101" if child is parent.test else None
        if isinstance(parent, cst.IfExp) and child is parent.test:
            return "NSY101"
        if isinstance(parent, cst.Assert):
            return "NSY401"
        if isinstance(parent, cst.AugAssign):
            if child is parent.value and isinstance(parent.operator, (cst.AddAssign,
                                                                      cst.SubtractAssign)):
                return "NSY201"
            return None
        if isinstance(parent, cst.Assign):
            return "NSY201" if _is_accumulation(parent) else None
        if isinstance(parent, cst.Call) and isinstance(child, cst.Arg):
            found = _call_owner(analysis, parent)
            if found is not None:
                return found
        if isinstance(parent, (cst.Lambda, cst.FunctionDef)) or isinstance(parent, _STATEMENTS):
            return None
        child = parent
    return None


def _call_owner(analysis: ModuleAnalysis, call: cst.Call) -> str | None:
    qnames = analysis.md.qualified_names(call.func)
    if "builtins.print" in qnames:
        return "NSY301"
    if qnames & {"builtins.max", "builtins.min"}:
        return "NSY203"
    if any(q.startswith(("logging.", "warnings.")) for q in qnames):
        return "NSY302"
    if any(q.startswith(("wandb.", "mlflow.")) for q in qnames):
        return "NSY303"
    func = call.func
    if not isinstance(func, cst.Attribute) or analysis.kind(func.value) is Kind.TENSOR:
        return None
    method = call_name(call)
    if method in ("append", "extend"):
        return "NSY202"
    if method in _METRIC_METHODS:
        return "NSY303"
    if method in _LOGGING_METHODS:
        return "NSY302"
    return None


def _is_accumulation(assign: cst.Assign) -> bool:
    """``acc = acc + ...`` or ``acc = ... + acc``."""
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return False
    name = assign.targets[0].target.value
    value = assign.value
    if not isinstance(value, cst.BinaryOperation) or not isinstance(value.operator,
                                                                    (cst.Add, cst.Subtract)):
        return False
    sides = [value.left] + ([value.right] if isinstance(value.operator, cst.Add) else [])
    return any(isinstance(s, cst.Name) and s.value == name for s in sides)


def is_stop_gradient_operand(analysis: ModuleAnalysis, read: cst.CSTNode) -> bool:
    """A read that is a direct operand of arithmetic with a tensor (NSY204's ``x * s.item()``)."""
    parent = analysis.md.parent(read)
    if not isinstance(parent, cst.BinaryOperation) or not isinstance(parent.operator,
                                                                     TENSOR_ARITHMETIC):
        return False
    other = parent.right if parent.left is read else parent.left
    return analysis.kind(other) is Kind.TENSOR or is_model_argument(analysis, other)
