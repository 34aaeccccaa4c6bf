"""NSY201 accumulate-on-device."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata.scope_provider import Assignment, Scope

from ..analysis import HostRead, Kind
from ..analysis.base import visit
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._device import dtype_family, is_fresh, is_int64
from ._helpers import detached, method_call, short
from ._hoist import (
    add_conversions,
    after_loop,
    binding_statement,
    host_uses,
    is_conversion,
    number_conversion,
    numeric_type,
    python_number_type,
    unpacked_value,
)
from ._host import placed_on_host
from .base import Rule

_METADATA_CALLS = frozenset({"size", "numel", "dim", "nelement", "element_size"})


@dataclass
class _Plan:
    """How one accumulator in one loop is moved to the device."""

    rewrite: Rewrite | None
    why_not: str = ""
    statements: list[cst.CSTNode] = field(default_factory=list)


@dataclass
class _Accumulation:
    """One statement that adds to the accumulator inside the loop."""

    holder: cst.CSTNode
    increment: cst.BaseExpression
    reads: list[HostRead]


class AccumulateOnDevice(Rule):
    """
    ## What it does
    Finds running sums of scalar reads in a loop — `total += loss.item()`,
    `correct += (pred == y).sum().item()`, `acc = acc + float(t)` — and keeps the
    sum on the device: the read becomes `.detach()`, and the accumulator is
    turned back into a Python number once, where the host needs it (right
    after the loop, or inside the periodic block that prints it). Also finds
    meters updated with reads (`meter.update(loss.item(), n)`).

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
        total += loss.detach().double()
    total = float(total)
    print(f"{total:.2f}")
    ```

    ## Fix safety
    The rewritten program hands the host the same type the original did, at
    every place it reads the accumulator, including after a loop that ran zero
    times: `float(total)` when the accumulator starts as a float, `int(total)`
    when a count of integers starts as an int, and otherwise
    `total.item() if isinstance(total, torch.Tensor) else total`, which gives
    an int or a float exactly as Python's arithmetic would have. A value read
    in a periodic block is converted just before that block reads it; a value
    that is returned, stored or dumped after the loop is converted right after
    the loop. The fix is refused when the accumulator is read on every step,
    inside a nested function, or after an `except` that could stop the loop
    midway (the conversion after the loop would not run).

    Precision: Python adds floats in float64, and so does the fix: each float
    read is cast with `.double()` (exact for float32, float16 and bfloat16
    values) and the sum is kept in float64, so every addition rounds exactly
    as Python's did and the result is the same to the last bit. Apple MPS has
    no float64: there, set `accumulate-dtype = "float32"` in
    `[tool.nosync-fix]`, which sums in float32 (`.float()`) and makes the fix
    unsafe: over thousands of steps the float32 sum can differ from Python's
    in the seventh significant digit, and integer counts summed into a float
    are exact only up to 2**24. Integer reads are summed in int64 (`.long()`
    unless the tensor is already int64, as counts of booleans are): exact,
    like Python; added to a sum that starts as a float, they are cast with
    `.double()`, as Python turns them into float64 there.

    Safe when the read is certainly of a tensor, and unsafe when the receiver
    is only likely to be one, or when the accumulator starts as an int and the
    tensor's dtype is unknown: it is then summed in that dtype, which loses
    precision for float16 and wraps around for small integer types (start at
    `0.0` to get the safe fix). Complex tensors are not supported by the
    float cast.

    Meters (`meter.update(loss.item(), n)`, the AverageMeter pattern) get an
    unsafe fix only: the read becomes `.detach()`, so the meter sums on the
    device, but everything the meter keeps (`val`, `sum`, `avg`) becomes a
    tensor. Formatting with a format spec (`f"{meter.avg:.3f}"`) prints the
    same, but `print(meter.avg)` shows `tensor(...)`, comparisons return
    tensors, and JSON or `torch.save` receive tensors. The fix is therefore
    offered only for a meter made in the same function whose every other use is
    `update`/`reset` or a number format of what it keeps (`{m.avg:.3f}`, with
    arithmetic in between); a meter that is returned, passed on, printed or put
    in a dict (`OrderedDict([("loss", m.avg)])`, then a CSV file or a tracker)
    is reported instead. Check the meter class before accepting the fix.

    An accumulator that is already a tensor (`total = torch.zeros((), device=d)`,
    `buf[0] += loss.item()`) only loses the read: `total += loss.detach()`. That
    fix is unsafe because a Python number takes the accumulator's dtype and
    device, while a tensor must match them (a CPU accumulator and a CUDA value
    fail; a float64 value added to a float32 accumulator rounds differently).

    `.detach()` is always added: `.item()` also cut autograd, and a tensor
    accumulator without it would keep every step's graph alive.

    ## When not to apply
    When the accumulator is read on every step (a running average printed each
    iteration) there is nothing to save; nosync-fix reports those without a fix.
    """

    code = "NSY201"
    name = "accumulate-on-device"
    summary = "Running sum of `.item()` reads in a loop: accumulate on the device, read once"
    fix_kind = "safe/unsafe"
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

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "update":
            return
        if self.analysis.kind(func.value) is Kind.TENSOR or not self._is_meter(func.value):
            return
        loop = self.analysis.loops.enclosing_loop(node)
        if loop is None:
            return
        reads = [r for arg in node.args for r in self._reads(arg.value)]
        if not reads or not all(self._device_compatible(a.value, self._reads(a.value))
                                for a in node.args if self._reads(a.value)):
            return
        escape = self._meter_escape(func.value)
        if escape is not None:
            self.report(node, f"`{short(node)}` reads the device {self._when(node)} (no automatic "
                              "fix: "
                              f"{escape}, and the meter would then hand on tensors, not "
                              "numbers; keep a device sum beside it and update the meter "
                              "once per epoch)")
            return
        rewrite = Rewrite(f"Pass `{short(func.value)}` detached tensors; it sums on the "
                          "device and what it keeps becomes tensors").unsafe()
        for read in reads:
            kept = detached(read.tensor)
            if not is_fresh(self.analysis, read.tensor, node, loop):
                kept = method_call(kept, "clone")
            family = dtype_family(self.analysis, read.tensor)
            if read.how == "float" and family != "float":
                kept = method_call(kept, "float")
            elif read.how == "int" and family not in ("int", "bool"):
                kept = method_call(kept, "long")
            rewrite = rewrite.replace(read.node, kept)
        self.report(node, f"`{short(node)}` reads the device {self._when(node)}; pass the "
                          "detached "
                          "tensor so that the meter sums on the device (unsafe: the meter "
                          "then holds tensors)", rewrite)

    def _when(self, node: cst.CSTNode) -> str:
        return self.analysis.loops.every_step(node)

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
            base = target.value if isinstance(target, (cst.Subscript, cst.Attribute)) else target
            if self.analysis.kind(base) is Kind.TENSOR and isinstance(node, cst.AugAssign):
                plan = self._tensor_accumulator(short(target), [_Accumulation(node, increment,
                                                                               reads)])
                self.report(node, f"`{what}` reads the device {self._when(node)} to add to a "
                                  "tensor; "
                                  "add the detached value instead", plan.rewrite)
                return
            self.report(node, f"`{what}` reads the device {self._when(node)}; keep the sum "
                              "in a "
                              "tensor and read it once after the loop (no automatic fix: "
                              "the accumulator is not a local variable)")
            return
        plan = self._plan(target, loop)
        message = (f"`{what}` reads the device {self._when(node)}; accumulate on the "
                   "device and "
                   "read once after the loop")
        if plan.rewrite is None:
            message += f" (no automatic fix: {plan.why_not})"
        self.report(node, message, plan.rewrite)

    # -- planning ----------------------------------------------------------------------------

    def _reads(self, increment: cst.BaseExpression) -> list[HostRead]:
        collector = _ReadCollector(self)
        visit(increment, collector)
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
        accumulations: list[_Accumulation] = []
        increments: list[cst.BaseExpression] = []  # everything ever added, in any loop
        literals: list[cst.BaseExpression] = []
        tensors: list[cst.CSTNode] = []
        read_after = False
        enclosing = self.analysis.loops.enclosing_loops(loop)
        for assignment in assignments:
            node = assignment.node
            if not isinstance(node, cst.Name):
                return _Plan(None, f"`{name}` is also bound by a parameter or definition")
            holder = binding_statement(self.md, node)
            if holder is None:
                value = unpacked_value(self.md, node)
                if value is not None and numeric_type(value) is not None:
                    literals.append(value)  # `correct, total = 0, 0`
                    continue
                return _Plan(None, f"`{name}` is also bound in an unpacking, loop or with")
            kind, increment = _accumulation_kind(holder, name)
            if kind == "accumulate" and increment is not None:
                increments.append(increment)
                if not self.md.is_ancestor(loop.body, holder):
                    continue  # summed elsewhere: that code's own plan
                reads = self._reads(increment)
                if not self._device_compatible(increment, reads):
                    return _Plan(None, "the summed expression needs host values")
                accumulations.append(_Accumulation(holder, increment, reads))
            elif kind == "literal":
                literals.append(holder.value)  # type: ignore[attr-defined]
            elif kind == "conversion":
                continue
            elif after_loop(self.md, holder, loop, enclosing):
                # `test_loss /= len(dataset)` after the loop: a host use of the number.
                read_after = read_after or isinstance(holder, cst.AugAssign)
            elif isinstance(holder, (cst.Assign, cst.AnnAssign)) and holder.value is not None \
                    and self.analysis.kind(holder.value) is Kind.TENSOR:
                tensors.append(holder)  # `total = torch.zeros((), device=device)`
            else:
                return _Plan(None, f"`{name}` is also assigned a value that is not a number")
        reads = [r for a in accumulations for r in a.reads]
        if not reads:
            return _Plan(None, "no read to move")
        if tensors and not literals:
            return self._tensor_accumulator(name, accumulations)
        if tensors or not literals:
            return _Plan(None, f"`{name}` does not start as a number literal")

        increment_types = [self._increment_type(i) for i in increments]
        if "power" in increment_types:
            return _Plan(None, "an integer power may be a fraction in Python but not on the "
                               "device")
        literal_types = [numeric_type(v) for v in literals]
        float_sum = all(t == "float" for t in literal_types)
        # In this loop the sum lives on the device: an int64 tensor cannot take a float in
        # place. (Sums made elsewhere reach it as Python numbers.)
        in_place = any(isinstance(a.holder, cst.AugAssign) for a in accumulations)
        here = {self._increment_type(a.increment) for a in accumulations}
        if not float_sum and in_place and {"int", "float"} <= here:
            return _Plan(None, f"`{name}` adds integers and floats in place, which an integer "
                               "tensor cannot hold")

        uses = host_uses(self.md, name, scope, loop, [a.holder for a in accumulations])
        if isinstance(uses, str):
            return _Plan(None, uses)
        uses.after_loop = uses.after_loop or read_after
        dtype_unknown = not float_sum and None in increment_types
        message = f"Accumulate `{name}` on the device; read it once where the host needs it"
        if dtype_unknown:
            message += (f" (unsafe: `{name}` starts as an int and the dtype of what is summed "
                        "is unknown, so it is summed in that dtype)")
        float64 = self.context.settings.accumulate_dtype == "float64"
        narrowed = not float64 and any(
            _sums_in_float(self._read_type(r), float_sum) for r in reads)
        if narrowed and not dtype_unknown:
            message += (" (unsafe: floats are summed in float32, as configured, where Python "
                        "adds in float64: the last digits may differ)")
        rewrite = Rewrite(message)
        if dtype_unknown or narrowed or not all(r.certain for r in reads):
            rewrite = rewrite.unsafe()
        for read in reads:
            rewrite = rewrite.replace(read.node, self._device_read(read, float_sum, float64))
        kind = python_number_type(literal_types, increment_types)  # type: ignore[arg-type]
        conversion, rewrite = number_conversion(self.analysis, name, kind, rewrite)
        return _Plan(add_conversions(rewrite, uses, loop, conversion))

    def _tensor_accumulator(self, name: str, accumulations: list[_Accumulation]) -> _Plan:
        """The accumulator is a tensor already: only the reads have to go (unsafe: the
        value then keeps its own dtype and device, where a Python number adopts the
        accumulator's)."""
        rewrite = Rewrite(f"`{name}` is already a tensor: add the detached value instead of "
                          "a Python number (unsafe: the value's dtype and device must suit "
                          f"`{name}`)").unsafe()
        for accumulation in accumulations:
            for read in accumulation.reads:
                rewrite = rewrite.replace(read.node, detached(read.tensor))
        return _Plan(rewrite)

    def _read_type(self, read: HostRead) -> str | None:
        """The type of Python number a read gives: "float", "int", or None when unknown."""
        if read.how in ("float", "int"):
            return read.how
        family = dtype_family(self.analysis, read.tensor)
        return {"float": "float", "int": "int", "bool": "int"}.get(family or "")

    def _device_read(self, read: HostRead, float_sum: bool,
                     float64: bool) -> cst.BaseExpression:
        """The tensor that replaces a read: detached, in the dtype the sum is kept in."""
        tensor = detached(read.tensor)
        kind = self._read_type(read)
        if _sums_in_float(kind, float_sum):
            return method_call(tensor, "double" if float64 else "float")
        if kind == "int":
            return tensor if is_int64(self.analysis, read.tensor) else method_call(tensor, "long")
        return tensor

    def _increment_type(self, expr: cst.BaseExpression) -> str | None:
        """"float", "int", None (unknown) or "power" (an integer power) for what is added."""
        read = self.analysis.host_read(expr)
        if read is not None:
            return self._read_type(read)
        if isinstance(expr, cst.Float):
            return "float"
        if isinstance(expr, cst.Integer):
            return "int"
        if isinstance(expr, cst.UnaryOperation):
            return self._increment_type(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            left, right = self._increment_type(expr.left), self._increment_type(expr.right)
            if "power" in (left, right):
                return "power"
            if isinstance(expr.operator, cst.Divide):
                return "float"
            if isinstance(expr.operator, cst.Power) and "float" not in (left, right):
                return "power"
            if "float" in (left, right):
                return "float"
            return None if None in (left, right) else "int"
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in _METADATA_CALLS:
                return "int"
            if isinstance(func, cst.Name) and func.value == "len":
                return "int"
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and (
            expr.value.attr.value == "shape"
        ):
            return "int"
        return None

    def _device_compatible(self, increment: cst.BaseExpression, reads: list[HostRead]) -> bool:
        """Whether the increment still works once its reads are tensors (plain arithmetic)."""
        read_nodes = {id(r.node) for r in reads}
        checker = _ArithmeticChecker(self, read_nodes)
        visit(increment, checker)
        return checker.ok

    def _meter_escape(self, receiver: cst.BaseExpression) -> str | None:
        """Why what the meter keeps may leave it as a value (a file, JSON, a logger, a
        caller), or None when every use is seen and only formats it as a number.

        The fix makes the meter hold tensors: `f"{m.avg:.3f}"` prints the same, while
        `print(m.avg)`, `OrderedDict(loss=m.avg)` or `return m` hand on `tensor(...)`.
        """
        if not isinstance(receiver, cst.Name):
            return f"`{short(receiver)}` is not a local name, so its uses cannot be seen"
        access = self.md.access(receiver)
        scope = self.md.scope(receiver)
        if access is None or scope is None or not access.referents or any(
                not isinstance(r, Assignment) or not isinstance(r.node, cst.Name)
                or isinstance(self.md.parent(r.node), cst.Param) for r in access.referents):
            return f"`{receiver.value}` is not made in this function, so its uses cannot be seen"
        referents = {id(r) for r in access.referents}
        for other in scope.accesses[receiver.value]:
            if not {id(r) for r in other.referents} & referents:
                continue
            reason = self._meter_use_escapes(other.node)
            if reason is not None:
                return reason
        return None

    def _meter_use_escapes(self, use: cst.CSTNode) -> str | None:
        attribute = self.md.parent(use)
        if not isinstance(attribute, cst.Attribute) or attribute.value is not use:
            return f"`{short(self.md.statement_of(use) or use)}` hands the meter on"
        call = self.md.parent(attribute)
        if isinstance(call, cst.Call) and call.func is attribute:
            if attribute.attr.value in ("update", "reset"):
                return None
            return f"`{short(call)}` may hand on what the meter keeps"
        # A value read from the meter must end in a number format (`{m.avg:.3f}`),
        # through arithmetic only.
        child: cst.CSTNode = attribute
        for ancestor in self.md.ancestors(attribute):
            if isinstance(ancestor, cst.FormattedStringExpression):
                if ancestor.format_spec and _numeric_spec(self.md.code(ancestor.format_spec[-1])):
                    return None
                break
            if not isinstance(ancestor, (cst.BinaryOperation, cst.UnaryOperation)):
                break
            child = ancestor
        return f"`{short(child)}` is used as a value, not only formatted as a number"

    def _is_meter(self, receiver: cst.BaseExpression) -> bool:
        """An AverageMeter-like object: a local class with `update`, a `*Meter` class, or a
        name that says meter."""
        text = (self.md.code(receiver) if isinstance(receiver, (cst.Name, cst.Attribute))
                else "")
        words = re.findall(r"[a-z]+|[A-Z][a-z]*", text.rsplit(".", 1)[-1])
        if {w.lower() for w in words} & {"meter", "meters"}:  # `loss_meter`, not `parameter`
            return True
        if not isinstance(receiver, cst.Name):
            return False
        access = self.md.access(receiver)
        if access is None or len(access.referents) != 1:
            return False
        referent = next(iter(access.referents))
        if not isinstance(referent, Assignment) or not isinstance(referent.node, cst.Name):
            return False
        holder = binding_statement(self.md, referent.node)
        value = getattr(holder, "value", None)
        if not isinstance(value, cst.Call):
            return False
        class_name = self.md.code(value.func).rsplit(".", 1)[-1]
        if class_name.endswith("Meter"):
            return True
        definition = self.analysis.tensors._local_definition(value.func)
        return isinstance(definition, cst.ClassDef) and any(
            isinstance(s, cst.FunctionDef) and s.name.value == "update"
            for s in definition.body.body)


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


def _sums_in_float(kind: str | None, float_sum: bool) -> bool:
    """Whether a read of this number type is summed as a float: a float read, or any read
    added to a sum that started as a float (Python turns an int into a float64 there; an
    int64 tensor added to a 0.0 would give float32, exact only up to 2**24)."""
    return kind == "float" or float_sum


class _ReadCollector(cst.CSTVisitor):
    def __init__(self, rule: AccumulateOnDevice) -> None:
        self.rule = rule
        self.reads: list[HostRead] = []

    def visit_Call(self, node: cst.Call) -> bool:
        read = self.rule.analysis.host_read(node)
        if read is not None and read.how in ("item", "float", "int"):
            if not placed_on_host(self.rule.analysis, read.tensor):
                self.reads.append(read)  # a CPU tensor's read waits for nothing
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


def _numeric_spec(spec: str) -> bool:
    """A format spec that prints a number the same from a 0-dim tensor (`.3f`, `6.2e`, `%`)."""
    return bool(re.fullmatch(r"[^{}]*[eEfFgG%]", spec))
