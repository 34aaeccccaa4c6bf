"""NSY201 accumulate-on-device."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata.scope_provider import Assignment, Scope

from ..analysis import HostRead, Kind
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._helpers import read_as_tensor, short
from ._hoist import (
    add_conversions,
    binding_statement,
    conversion_statement,
    host_uses,
    is_conversion,
    numeric_type,
)
from .base import Rule

_METADATA_CALLS = frozenset({"size", "numel", "dim", "nelement", "element_size"})


@dataclass
class _Plan:
    """How one accumulator in one loop is moved to the device."""

    rewrite: Rewrite | None
    why_not: str = ""
    statements: list[cst.CSTNode] = field(default_factory=list)


class AccumulateOnDevice(Rule):
    """
    ## What it does
    Finds running sums of scalar reads in a loop — `total += loss.item()`,
    `correct += (pred == y).sum().item()`, `acc = acc + float(t)` — and keeps the
    sum on the device: the read becomes `.detach()`, and the accumulator is
    turned back into a Python number once, where the host needs it (right
    after the loop, or inside the periodic block that prints it).

    ## Why is this slow?
    Each `.item()` makes the host wait until the device has finished all queued
    work, every step: the accelerator idles while Python catches up. Under
    `torch.compile` the read also splits the graph. Summing on the device costs
    one small kernel and no wait; the single read after the loop waits once.

    ## Example
    ```python
    import torch

    total = 0.0
    for step in range(4):
        loss = torch.tensor(0.25) * step
        total += loss.item()
    print(f"{total:.2f}")
    ```

    ## Use instead
    ```python
    import torch

    total = 0.0
    for step in range(4):
        loss = torch.tensor(0.25) * step
        total += loss.detach()
    total = float(total)
    print(f"{total:.2f}")
    ```

    ## Fix safety
    Safe when the read is certainly of a tensor, unsafe when the receiver is
    only likely to be one. The rewritten program hands the host the same type
    the original did: the conversion uses `float()` when the accumulator starts
    as a float, `int()` for integer counts, and otherwise `.item()` guarded by
    `isinstance(..., torch.Tensor)` so that a loop that ran zero times leaves the
    initial value untouched.

    Precision: Python adds floats in float64; the rewrite adds in the dtype of
    the tensor that was read (float32 for most losses, int64 for counts, exact).
    Over thousands of steps a float32 sum can differ from the float64 one in the
    sixth or seventh significant digit. Set `accumulate-dtype = "float64"` in
    `[tool.nosync-fix]` to accumulate in float64 on the device instead (not
    supported on Apple MPS).

    `.detach()` is always added: `.item()` also cut autograd, and a tensor
    accumulator without it would keep every step's graph alive.

    ## When not to apply
    When the accumulator is read on every step (a running average printed each
    iteration) there is nothing to save; nosync-fix reports those without a fix.
    """

    code = "NSY201"
    name = "accumulate-on-device"
    summary = "Running sum of `.item()` reads in a loop: accumulate on the device, read once"
    fix_kind = "safe"
    cost = "sync and graph break"
    triggers = (".item(", "float(", "int(")
    signals = Signal.ACCUMULATE

    def __init__(self, context) -> None:  # type: ignore[no-untyped-def]
        super().__init__(context)
        self._plans: dict[tuple[int, str, int], _Plan] = {}

    # -- visiting ----------------------------------------------------------------------------

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            self._candidate(node, node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.value, cst.BinaryOperation):
            return
        target = node.targets[0].target
        value = node.value
        if not isinstance(target, cst.Name):
            return
        if isinstance(value.operator, (cst.Add, cst.Subtract)) and _same_name(value.left, target):
            self._candidate(node, target, value.right)
        elif isinstance(value.operator, cst.Add) and _same_name(value.right, target):
            self._candidate(node, target, value.left)

    def _candidate(self, node: cst.CSTNode, target: cst.BaseExpression,
                   increment: cst.BaseExpression) -> None:
        reads = self._reads(increment)
        if not reads:
            return
        loop = self.analysis.loops.enclosing_loop(node)
        if loop is None:
            return
        statement_node = self.md.statement_of(node)
        what = short(node)
        if not isinstance(target, cst.Name) or statement_node is None:
            self.report(node, f"`{what}` reads the device every step; keep the sum in a "
                              "tensor and read it once after the loop (no automatic fix: "
                              "the accumulator is not a local variable)")
            return
        plan = self._plan(target, loop)
        message = (f"`{what}` reads the device every step; accumulate on the device and "
                   "read once after the loop")
        if plan.rewrite is None:
            message += f" (no automatic fix: {plan.why_not})"
        self.report(node, message, plan.rewrite)

    # -- planning ----------------------------------------------------------------------------

    def _reads(self, increment: cst.BaseExpression) -> list[HostRead]:
        collector = _ReadCollector(self)
        increment.visit(collector)
        return collector.reads

    def _plan(self, target: cst.Name, loop: cst.For | cst.While) -> _Plan:
        scope = self.md.scope(target)
        key = (id(scope), target.value, id(loop))
        if key not in self._plans:
            self._plans[key] = self._make_plan(target.value, scope, loop)
        return self._plans[key]

    def _make_plan(self, name: str, scope: Scope | None, loop: cst.For | cst.While) -> _Plan:
        if scope is None:
            return _Plan(None, "cannot resolve the accumulator's scope")
        assignments = list(scope.assignments[name])
        if not assignments or not all(isinstance(a, Assignment) for a in assignments):
            return _Plan(None, f"`{name}` is not a plain local variable")
        accumulations: list[tuple[cst.CSTNode, list[HostRead]]] = []
        initial_literals: list[cst.BaseExpression] = []
        for assignment in assignments:
            node = assignment.node
            if not isinstance(node, cst.Name):
                return _Plan(None, f"`{name}` is also bound by a parameter or definition")
            holder = binding_statement(self.md, node)
            if holder is None:
                return _Plan(None, f"`{name}` is also bound in an unpacking, loop or with")
            kind, increment = _accumulation_kind(holder, name)
            if kind == "accumulate":
                inside = self.md.is_ancestor(loop.body, holder)
                reads = self._reads(increment) if inside else []
                if inside and not self._device_compatible(increment, reads):
                    return _Plan(None, "the summed expression needs host values")
                if inside:
                    accumulations.append((holder, reads))
            elif kind == "literal":
                initial_literals.append(holder.value)  # type: ignore[attr-defined]
            elif kind == "conversion":
                pass
            else:
                return _Plan(None, f"`{name}` is also assigned a value that is not a number")
        reads = [r for _, rs in accumulations for r in rs]
        if not reads:
            return _Plan(None, "no read to move")
        if not initial_literals:
            return _Plan(None, f"`{name}` does not start as a number literal")

        devices = [holder for holder, _ in accumulations]
        uses = host_uses(self.md, name, scope, loop, devices)
        if isinstance(uses, str):
            return _Plan(None, uses)
        rewrite = Rewrite(f"Accumulate `{name}` on the device; read it once where the host "
                          "needs it")
        if not all(r.certain for r in reads):
            rewrite = rewrite.unsafe()
        float64 = self.context.settings.accumulate_dtype == "float64"
        for read in reads:
            rewrite = rewrite.replace(read.node, read_as_tensor(read, self.analysis, float64))
        conversion, rewrite = conversion_statement(self.analysis, name, initial_literals, reads,
                                                   rewrite)
        return _Plan(add_conversions(rewrite, uses, loop, conversion))

    def _device_compatible(self, increment: cst.BaseExpression, reads: list[HostRead]) -> bool:
        """Whether the increment still works once its reads are tensors (plain arithmetic)."""
        read_nodes = {id(r.node) for r in reads}
        checker = _ArithmeticChecker(self, read_nodes)
        increment.visit(checker)
        return checker.ok


def _same_name(node: cst.BaseExpression, target: cst.Name) -> bool:
    return isinstance(node, cst.Name) and node.value == target.value and not node.lpar


def _accumulation_kind(holder: cst.CSTNode, name: str) -> tuple[str, cst.BaseExpression | None]:
    """Classify a statement binding ``name``: accumulate, literal, conversion or other."""
    if isinstance(holder, cst.AugAssign):
        if isinstance(holder.operator, (cst.AddAssign, cst.SubtractAssign)):
            return "accumulate", holder.value
        return "other", None
    value = getattr(holder, "value", None)
    if value is None:
        return "other", None
    if numeric_type(value) is not None:
        return "literal", None
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add,
                                                                             cst.Subtract)):
        if isinstance(value.left, cst.Name) and value.left.value == name:
            return "accumulate", value.right
        if isinstance(value.operator, cst.Add) and isinstance(value.right, cst.Name) and (
            value.right.value == name
        ):
            return "accumulate", value.left
    if is_conversion(value, name):
        return "conversion", None
    return "other", None


class _ReadCollector(cst.CSTVisitor):
    def __init__(self, rule: AccumulateOnDevice) -> None:
        self.rule = rule
        self.reads: list[HostRead] = []

    def visit_Call(self, node: cst.Call) -> bool:
        read = self.rule.analysis.host_read(node)
        if read is not None and read.how in ("item", "float", "int"):
            self.reads.append(read)
            return False
        return True

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


class _ArithmeticChecker(cst.CSTVisitor):
    """Accepts numbers, host names, sizes, arithmetic and the reads themselves."""

    _OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide,
                  cst.Modulo, cst.Power)

    def __init__(self, rule: AccumulateOnDevice, reads: set[int]) -> None:
        self.rule = rule
        self.reads = reads
        self.ok = True

    def on_visit(self, node: cst.CSTNode) -> bool:
        if not self.ok:
            return False
        if id(node) in self.reads:
            return False
        if isinstance(node, (cst.Integer, cst.Float, cst.LeftParen, cst.RightParen,
                             cst.BaseParenthesizableWhitespace, cst.Comma)):
            return False
        if isinstance(node, cst.BinaryOperation):
            if not isinstance(node.operator, self._OPERATORS):
                self.ok = False
            return True
        if isinstance(node, cst.UnaryOperation):
            if not isinstance(node.operator, (cst.Minus, cst.Plus)):
                self.ok = False
            return True
        if isinstance(node, cst.BaseBinaryOp) or isinstance(node, cst.BaseUnaryOp):
            return False
        if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)):
            if self.rule.analysis.kind(node) is not Kind.HOST:
                self.ok = False
            return False
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _METADATA_CALLS:
                return False
            if isinstance(func, cst.Name) and func.value == "len":
                return False
            self.ok = False
            return False
        if isinstance(node, cst.BaseExpression):
            self.ok = False
        return False

