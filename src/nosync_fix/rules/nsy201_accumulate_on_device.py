"""NSY201 accumulate-on-device."""

from __future__ import annotations

import keyword
import math
import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata.scope_provider import Assignment, FunctionScope, Scope

from ..analysis import HostRead, Kind
from ..analysis.base import visit, walk
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._deferred import RuntimeNames
from ._device import dtype_family, is_fresh, is_int64
from ._helpers import code_of, detached, method_call, short
from ._hoist import (
    add_conversions,
    after_loop,
    binding_statement,
    count_under_condition,
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

    In a Jupyter notebook, a fix that converts the value after a loop at a cell's top
    level is unsafe: stopping a loop is routine there and the kernel keeps its variables,
    so after an interrupt the conversion never runs and a tensor is left where the
    original left a number. Inside a function, whose locals the interrupt discards, the
    fix keeps its safety.

    Precision: Python adds floats in float64, and so does the fix: each
    float read is cast with `.double()` (exact for float32, float16 and
    bfloat16 values) and the sum is kept in float64, so every addition
    rounds exactly as Python's did and the result is the same to the last
    bit. Apple MPS has no float64, and `.double()` raises there: in a file
    that mentions MPS (`mps` as a word of a name or a string:
    `torch.backends.mps`, `use_mps`, `"mps:0"`) a fix that adds a
    `.double()` is unsafe. A file that runs on MPS without naming it (a
    device chosen by a library) is not recognised; there, or to sum on MPS,
    set `accumulate-dtype = "float32"` in `[tool.nosync-fix]`, which sums in
    float32 (`.float()`) and makes the fix unsafe: over thousands of steps
    the float32 sum can differ from Python's in the seventh significant
    digit, and integer counts summed into a float are exact only up to
    2**24. Integer reads are summed in int64 (`.long()` unless the tensor is
    already int64, as counts of booleans are): exact, like Python; added to
    a sum that starts as a float, they are cast with `.double()`, as Python
    turns them into float64 there.

    Devices: the sum lives on the device of the first value added. A loop over
    a model's parameters (`model.parameters()`, an optimizer group's
    `"params"`) may meet several devices when the model is split across them,
    and adding a value from another device fails: that fix is unsafe.

    Safe when the read is certainly of a tensor, and unsafe when the receiver
    is only likely to be one, or when the accumulator starts as an int and the
    tensor's dtype is unknown. The read is then wrapped in
    `nosync_fix.runtime.python_precision`, which looks at the dtype when the
    code runs and sums floats in float64, integers and booleans in int64 and
    complex values in complex128, as Python would (summing in the tensor's own
    dtype, as earlier versions did, rounds a float32 loss differently from
    Python's float64 sum and wraps small integer types). It stays unsafe because
    nothing in the source says what the value is (start at `0.0` to get the
    safe fix). With `accumulate-dtype = "float32"` such reads are summed in
    their own dtype. Complex tensors are not supported by the float cast.

    Meters (`meter.update(loss.item(), n)`, the AverageMeter pattern) get an
    unsafe fix only: the read becomes `.detach()`, so the meter sums on the
    device, but everything the meter keeps (`val`, `sum`, `avg`) becomes a
    tensor. Formatting with a format spec (`f"{meter.avg:.3f}"`) prints the
    same, but `print(meter.avg)` shows `tensor(...)`, comparisons return
    tensors, and JSON or `torch.save` receive tensors. The fix is therefore
    offered only for a meter made in the same function (or in one that encloses
    it) whose every other use, there and in the functions nested in it, is
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

    A count kept under a device condition (`if norm > max_norm: clipped += 1`,
    no `else`, one `+=` of a number literal) becomes `clipped +=
    (norm > max_norm).long()` (`.double()` when the count starts as a float,
    `* k` for a step `k`), converted with `int()`/`float()` where the host reads
    it. The condition is the same comparison, so NaN compares as it did. Unsafe:
    a condition of more than one element raised at the `if`; the fixed count
    raises only where it is converted. A count that starts as an int and adds a
    float is reported (its type would depend on whether the condition ever held).

    Division: torch computes `c / t` for a Python number `c` as
    `t.reciprocal() * c`, which rounds twice where Python's `c / x` rounds once
    (on the CPU with torch 2.13, 29% of float64 values differ in the last bit
    for `c = 3`). A sum whose increment divides a number by a read is therefore
    reported, not fixed; `1 / t` and `t / u` round as Python does and are fixed.
    `t / c` rounds as Python does on the CPU, but CUDA computes a division by a
    Python number as `t * (1 / c)`, two roundings (PyTorch's
    `BinaryDivTrueKernel.cu`: "may lose one bit of precision"): its fix is unsafe,
    unless `c` is a literal power of two (`/ 2`, `/ 0.5`), whose reciprocal is
    exact (`loss.item() / args.gradient_accumulation_steps` is unsafe).

    Reported without a fix, each with what to write instead: a sum kept in a
    dict entry or an attribute (`running["loss"] += loss.item()`,
    `self.total += ...`: sum in a local, add it once after the loop); a
    recurrence other than a sum (`ema = b * ema + (1 - b) * loss.item()`: the
    same line with `loss.detach().double()`, then `float(ema)`); a read kept
    in a local that the loop then sums or appends (`ratio = a.item() /
    b.item()`, `total += ratio`), also when that local is used in tensor
    arithmetic, where the read stopped the gradient (`adv = r - value.item()`:
    `value.detach().double()`); and a `math` function of a read that is summed
    (`total += 10 * math.log10(1 / mse.item())`): `torch.log10` and
    `torch.exp` in float64 do not round every last bit as `math.log10` and
    `math.exp` do (12 to 15% and 0.5% of values differ on the CPU), so only the
    person can choose between collecting the values (exact) and summing on the
    device (last-bit differences).

    ## When not to apply
    When the accumulator is read on every step (a running average printed each
    iteration) there is nothing to save; nosync-fix reports those without a fix.
    """

    code = "NSY201"
    name = "accumulate-on-device"
    summary = "Running sum of `.item()` reads in a loop: accumulate on the device, read once"
    fix_kind = "safe/unsafe"
    cost = "sync and graph break"
    triggers = (".item(", "float(", "int(", "if")
    # READ: reads that feed a sum later (`ratio`); CONDITION: counts under a device `if`.
    signals = Signal.ACCUMULATE | Signal.READ | Signal.CONDITION

    def __init__(self, context) -> None:  # type: ignore[no-untyped-def]
        super().__init__(context)
        self._plans: dict[tuple[int, str, int], _Plan] = {}
        self._runtime: RuntimeNames | None = None

    def _runtime_names(self) -> RuntimeNames:
        if self._runtime is None:
            self._runtime = RuntimeNames(self.analysis)
        return self._runtime

    # -- visiting ----------------------------------------------------------------------------

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            self._candidate(node, node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        value = node.value
        if not isinstance(target, cst.Name):
            return
        if isinstance(value, cst.BinaryOperation):
            if isinstance(value.operator, (cst.Add, cst.Subtract)) and _same_name(value.left,
                                                                                target):
                self._candidate(node, target, value.right)
                return
            if isinstance(value.operator, cst.Add) and _same_name(value.right, target):
                self._candidate(node, target, value.left)
                return
        self._host_value(node, target, value)

    def visit_If(self, node: cst.If) -> None:
        """`if norm > max_norm: clipped += 1`: a count kept under a device condition
        (issue 18, form e) becomes `clipped += (norm > max_norm).long()`."""
        update = count_under_condition(self.analysis, node)
        if update is None or not isinstance(update.target, cst.Name):
            return
        loop = self.analysis.loops.enclosing_loop(node)
        assert loop is not None
        plan = self._count_plan(node, update, loop)
        name = update.target.value
        message = (f"`if {short(node.test)}: {short(update)}` reads the device "
                   f"{self._when(node)} to count on the host; count on the device "
                   f"(`{name} += ({short(node.test)}).long()`) and read once after the loop")
        if plan.rewrite is None:
            message += f" (no automatic fix: {plan.why_not})"
        self.report(node, message, plan.rewrite)

    def _count_plan(self, branch: cst.If, update: cst.AugAssign,
                    loop: cst.For | cst.While) -> _Plan:
        target = update.target
        assert isinstance(target, cst.Name)
        name = target.value
        scope = self.md.scope(target)
        if scope is None:
            return _Plan(None, "cannot resolve the counter's scope")
        literals: list[cst.BaseExpression] = []
        enclosing = self.analysis.loops.enclosing_loops(loop)
        for assignment in scope.assignments[name]:
            if not isinstance(assignment, Assignment) or not isinstance(assignment.node,
                                                                        cst.Name):
                return _Plan(None, f"`{name}` is not a plain local variable")
            holder = binding_statement(self.md, assignment.node)
            if holder is update:
                continue
            if holder is None:
                value = unpacked_value(self.md, assignment.node)
                if value is not None and numeric_type(value) is not None:
                    literals.append(value)
                    continue
                return _Plan(None, f"`{name}` is also bound in an unpacking, loop or with")
            if self.md.is_ancestor(loop, holder):
                return _Plan(None, f"`{name}` is also changed elsewhere in the loop")
            kind, _ = _accumulation_kind(holder, name)
            if kind == "literal":
                literals.append(holder.value)  # type: ignore[attr-defined]
            elif kind == "conversion" or after_loop(self.md, holder, loop, enclosing):
                continue
            else:
                return _Plan(None, f"`{name}` is also assigned a value that is not a number")
        if not literals:
            return _Plan(None, f"`{name}` does not start as a number literal")
        literal_types = {numeric_type(v) for v in literals}
        step_type = numeric_type(update.value)
        if literal_types == {"float"}:
            kind, cast = "float", "double"
        elif literal_types == {"int"} and step_type == "int":
            kind, cast = "int", "long"
        else:
            return _Plan(None, f"`{name}` would be an int or a float depending on whether "
                               "the condition ever held")
        uses = host_uses(self.md, name, scope, loop, [branch])
        if isinstance(uses, str):
            return _Plan(None, uses)
        condition = method_call(branch.test.with_changes(lpar=[], rpar=[]), cast)
        step = update.value
        increment: cst.BaseExpression = condition
        if not (isinstance(step, cst.Integer) and step.evaluated_value == 1):
            increment = cst.BinaryOperation(condition, cst.Multiply(), step)
        new = line_with(cst.AugAssign(cst.Name(name), cst.AddAssign(), increment), branch)
        spread = f" (and {_SPREAD})" if self._over_parameters(branch, loop) else ""
        rewrite = Rewrite(f"Count `{name}` on the device; read it once where the host needs "
                          "it (unsafe: a condition of more than one element raised at "
                          "`if`; the fixed count raises only where it is converted)"
                          f"{spread}").unsafe()
        rewrite = rewrite.replace(branch, new)
        conversion, rewrite = number_conversion(self.analysis, name, kind, rewrite)
        return _Plan(add_conversions(rewrite, uses, loop, conversion))

    def _host_value(self, node: cst.Assign, target: cst.Name,
                    value: cst.BaseExpression) -> None:
        """Report, precisely, a read kept as a Python number that feeds a recurrence
        (`ema = b * ema + (1 - b) * loss.item()`) or that is then summed or collected in
        the same loop (`ratio = a.item() / b.item()`, then `total += ratio`). No fix: the
        message says what to write."""
        reads = self._reads(value)
        if not reads:
            return
        loop = self.analysis.loops.enclosing_loop(node)
        statement_node = self.md.statement_of(node)
        if loop is None or statement_node is None:
            return
        what = short(node)
        name = target.value
        device = ", ".join(f"`{code_of(r.node)}` -> `{code_of(self._suggested(r))}`"
                          for r in reads)
        old_values = [n for n in _names_in(value) if _same_name(n, target)]
        if old_values:
            # A recurrence is arithmetic on the old value and a read of something else:
            # not a conversion of the value itself (`t = t.item() if ... else t`), nor
            # arithmetic on a tensor (`passk = passk / n.item()`: NSY204's).
            if not isinstance(value, cst.BinaryOperation) or is_conversion(value, name) or any(
                    _same_name(n, target) for r in reads for n in _names_in(r.tensor)) or any(
                    self.analysis.kind(n) is Kind.TENSOR for n in old_values):
                return
            exactness = ("Python's float arithmetic is float64, and float64 tensors give the "
                         "same bits with Python float coefficients")
            divisor = self._host_divisor(value, reads)
            if divisor is not None:
                exactness += (f", except that CUDA divides by `{short(divisor)}` as a product "
                              "with its reciprocal, which may differ in the last bit")
            self.report(node, f"`{what}` reads the device {self._when(node)} to update a "
                              f"running value (no automatic fix: nosync-fix moves running "
                              f"sums, and `{name}` is another recurrence). Keep `{name}` on "
                              f"the device: {device} in this line ({exactness}), then "
                              f"`{name} = float({name})` where the host reads it; if it is "
                              "read every step, read it less often")
            return
        uses = self._accumulating_uses(name, node, loop)
        if not uses:
            return
        feeds = " and ".join(f"`{short(u)}`" for u in uses)
        after = " and ".join(_conversion_after(u) for u in uses)
        tensor_use = self._tensor_use(name, node, loop)
        if tensor_use is not None:
            use, certain = tensor_use
            gradient = ("where the read also stops the gradient" if certain else
                        "where, if that is a tensor, the read also stops the gradient")
            self.report(node, f"`{what}` reads the device {self._when(node)} for a value "
                              f"that is both used in tensor arithmetic (`{short(use)}`, "
                              f"{gradient}) and accumulated on the host ({feeds}) (no "
                              "automatic fix: both roles must be kept). Write "
                              f"{device}: `.detach()` stops the gradient as the read did "
                              "and float64 keeps Python's arithmetic; accumulate the "
                              f"tensor on the device and convert once after the loop: "
                              f"{after}")
            return
        self.report(node, f"`{what}` reads the device {self._when(node)} for a value that is "
                          f"then accumulated on the host ({feeds}) (no automatic fix: "
                          f"`{name}` is a Python number where it is used). Keep it a "
                          f"tensor: {device} (float64, as Python's arithmetic), accumulate "
                          f"it on the device and convert once after the loop: {after}")

    def _suggested(self, read: HostRead) -> cst.BaseExpression:
        """The device expression a person would write for a read: detached, in the dtype
        Python computes with (float64 for floats, int64 for integers)."""
        kind = self._read_type(read)
        return self._device_read(read, kind != "int", True)

    def _local_uses(self, name: str, node: cst.CSTNode,
                    loop: cst.For | cst.While) -> list[cst.Name]:
        """The uses of ``name`` in ``loop``'s body that see the binding at ``node``."""
        scope = self.md.scope(node)
        if scope is None:
            return []
        uses = []
        for assignment in scope.assignments[name]:
            if not isinstance(assignment, Assignment) or not self.md.is_ancestor(
                    node, assignment.node):
                continue
            for access in assignment.references:
                if isinstance(access.node, cst.Name) and self.md.is_ancestor(loop.body,
                                                                             access.node):
                    uses.append(access.node)
        return sorted(uses, key=self.md.source_order)

    def _accumulating_uses(self, name: str, node: cst.CSTNode,
                           loop: cst.For | cst.While) -> list[cst.CSTNode]:
        """Statements of the loop that add ``name`` to a sum or append it to a list."""
        found: list[cst.CSTNode] = []
        for use in self._local_uses(name, node, loop):
            parent = self.md.parent(use)
            holder: cst.CSTNode | None = None
            if isinstance(parent, cst.AugAssign) and parent.value is use and isinstance(
                    parent.operator, (cst.AddAssign, cst.SubtractAssign)):
                holder = parent
            elif isinstance(parent, cst.BinaryOperation) and isinstance(
                    parent.operator, cst.Add):
                assign = self.md.parent(parent)
                if isinstance(assign, cst.Assign) and assign.value is parent and len(
                        assign.targets) == 1 and isinstance(assign.targets[0].target,
                                                            cst.Name) and any(
                        _same_name(side, assign.targets[0].target)
                        for side in (parent.left, parent.right)):
                    holder = assign
            elif isinstance(parent, cst.Arg):
                call = self.md.parent(parent)
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and (
                        call.func.attr.value == "append") and len(call.args) == 1:
                    holder = call
            if holder is not None and not any(h is holder for h in found):
                found.append(holder)
        return found

    def _tensor_use(self, name: str, node: cst.CSTNode,
                    loop: cst.For | cst.While) -> tuple[cst.CSTNode, bool] | None:
        """A statement of the loop where ``name`` is combined with what is (True) or may be
        (False) a tensor."""
        for use in self._local_uses(name, node, loop):
            parent = self.md.parent(use)
            if isinstance(parent, cst.BinaryOperation):
                other = parent.right if parent.left is use else parent.left
                kind = self.analysis.kind(other)
                if kind is not Kind.HOST:
                    return self.md.statement_of(parent) or parent, kind is Kind.TENSOR
        return None

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
        if _is_text(increment):
            return  # `label += f" AUC={auc.item():.3f}"` builds text: NSY906 reports the read
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
                              "in a tensor and read it once after the loop "
                              f"{self._not_local(target, increment, reads)}")
            return
        plan = self._plan(target, loop)
        message = (f"`{what}` reads the device {self._when(node)}; accumulate on the "
                   "device and "
                   "read once after the loop")
        if plan.rewrite is None:
            message += f" (no automatic fix: {plan.why_not})"
        self.report(node, message, plan.rewrite)

    def _not_local(self, target: cst.BaseExpression, increment: cst.BaseExpression,
                   reads: list[HostRead]) -> str:
        """Why an accumulator that is an entry or an attribute gets no fix, and what to
        write instead (form a of issue 18: `running["loss"] += loss.item()`)."""
        new = increment
        for read in reads:
            new = new.deep_replace(read.node, self._suggested(read))  # type: ignore[assignment]
        device = code_of(new)
        where = code_of(target)
        if isinstance(target, cst.Subscript) and len(target.slice) == 1 and isinstance(
                target.slice[0].slice, cst.Index):
            key = target.slice[0].slice.value
            holder = code_of(target.value)
            if isinstance(key, (cst.SimpleString, cst.Integer)):
                local = _local_name(key)
                return (f"(no automatic fix: `{where}` is an entry of `{holder}`, and "
                        "nosync-fix moves only sums kept in local variables). Sum in a "
                        f"local instead: `{local} = 0.0` before the loop, `{local} += "
                        f"{device}` in it, and `{where} += float({local})` after it (or "
                        f"where the host reads `{holder}`)")
            return (f"(no automatic fix: `{where}` is an entry of `{holder}` whose key "
                    f"`{code_of(key)}` changes from step to step). Keep a dict of device "
                    f"sums instead: `sums[{code_of(key)}] = sums.get({code_of(key)}, 0.0) + "
                    f"{device}` in the loop, then `{where} += float(sums[{code_of(key)}])` "
                    f"for each key after it")
        if isinstance(target, cst.Attribute):
            local = target.attr.value
            return (f"(no automatic fix: `{where}` is an attribute, which other code may "
                    f"read at any time). Sum in a local instead: `{local} = 0.0` before the "
                    f"loop, `{local} += {device}` in it, and `{where} += float({local})` "
                    "after it")
        return "(no automatic fix: the accumulator is not a local variable)"

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
                    return _Plan(None, self._needs_host(name, increment, reads))
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
        float64 = self.context.settings.accumulate_dtype == "float64"
        message = f"Accumulate `{name}` on the device; read it once where the host needs it"
        if dtype_unknown and float64:
            message += (f" (unsafe: `{name}` starts as an int and the dtype of what is summed "
                        "is known only when the code runs; `python_precision` then sums "
                        "floats in float64 and integers in int64, as Python would)")
        elif dtype_unknown:
            message += (f" (unsafe: `{name}` starts as an int and the dtype of what is summed "
                        "is unknown, so it is summed in that dtype)")
        narrowed = not float64 and any(
            _sums_in_float(self._read_type(r), float_sum) for r in reads)
        if narrowed and not dtype_unknown:
            message += (" (unsafe: floats are summed in float32, as configured, where Python "
                        "adds in float64: the last digits may differ)")
        divisor = next((d for a in accumulations
                        if (d := self._host_divisor(a.increment, a.reads)) is not None), None)
        if divisor is not None:
            message += (f" (unsafe: on CUDA, torch divides by a Python number as `t * (1 / "
                        f"{short(divisor)})`, which may round the last bit otherwise than "
                        "Python's division)")
        spread = any(self._over_parameters(r.node, loop) for r in reads)
        if spread:
            message += f" (unsafe: {_SPREAD})"
        rewrite = Rewrite(message)
        if dtype_unknown or narrowed or divisor is not None or spread or not all(
                r.certain for r in reads):
            rewrite = rewrite.unsafe()
        for read in reads:
            new = self._device_read(read, float_sum, float64)
            if float64 and self._read_type(read) is None and not float_sum:
                # The read's dtype is unknown: an int start plus a float32 loss must still
                # be summed in float64, an integer count in int64 (issue 20).
                names = self._runtime_names()
                new = names.call("python_precision", new)
                rewrite = names.imports(rewrite, {"python_precision"})
            rewrite = rewrite.replace(read.node, new)
        kind = python_number_type(literal_types, increment_types)  # type: ignore[arg-type]
        conversion, rewrite = number_conversion(self.analysis, name, kind, rewrite)
        return _Plan(add_conversions(rewrite, uses, loop, conversion))

    def _over_parameters(self, read: cst.CSTNode, loop: cst.For | cst.While) -> bool:
        """Whether a loop from ``read`` out to ``loop`` iterates a model's parameters (or
        buffers, or an optimizer group's ``"params"``): each may live on its own device."""
        for node in self.md.ancestors(read):
            if isinstance(node, cst.For) and _parameters(node.iter):
                return True
            if node is loop:
                return False
        return False

    def _needs_host(self, name: str, increment: cst.BaseExpression,
                    reads: list[HostRead]) -> str:
        """Why an increment cannot be summed on the device, as precisely as is known."""
        if self._arithmetic(increment, reads).reason == "divisor":
            return ("a read divides a number: torch computes `c / t` as `c * (1 / t)`, "
                    "rounding twice where Python rounds once, so the sum would differ in "
                    "the last bits; collect the divisors on the device (NSY202) and do "
                    "the divisions and the sum after the loop, in the same order")
        function = _host_function(self, increment, reads)
        if function is None:
            return "the summed expression needs host values"
        torch_name = "torch." + function.rsplit(".", 1)[-1]
        values = ", ".join(f"`{code_of(r.tensor)}`" for r in reads)
        return (f"`{function}` runs on the host, and `{torch_name}` on a float64 tensor is not "
                f"guaranteed to round the last bit as `{function}` does, so no fix is offered. "
                f"To keep every bit, collect {values} on the device (`values.append("
                f"{code_of(detached(reads[0].tensor))})`) and apply the same expression to "
                f"`to_host(values, \"item\")` after the loop, adding to `{name}` in the same "
                "order; or, accepting last-bit differences, sum "
                f"`{torch_name}(...)` of `{code_of(self._suggested(reads[0]))}` on the device")

    def _host_divisor(self, increment: cst.BaseExpression,
                      reads: list[HostRead]) -> cst.BaseExpression | None:
        """A host number that a read is divided by (`loss.item() / steps`), unless it is a
        literal power of two.

        On the CPU, `t / c` rounds once, as Python's `x / c` does. CUDA's kernel for a
        divisor that is a CPU scalar (a Python number) multiplies by its reciprocal instead
        (`BinaryDivTrueKernel.cu`: "may lose one bit of precision"): two roundings, unless
        `1 / c` is exact, as it is for a power of two."""
        read_nodes = {id(r.node) for r in reads}
        for node, _ in walk(increment):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide) \
                    and _holds_read(node.left, read_nodes) \
                    and not _holds_read(node.right, read_nodes) \
                    and not _power_of_two(node.right):  # `t / u`: one rounding, on the device
                return node.right
        return None

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
        return self._arithmetic(increment, reads).ok

    def _arithmetic(self, increment: cst.BaseExpression,
                    reads: list[HostRead]) -> _ArithmeticChecker:
        read_nodes = {id(r.node) for r in reads}
        checker = _ArithmeticChecker(self, read_nodes)
        visit(increment, checker)
        return checker

    def _meter_escape(self, receiver: cst.BaseExpression) -> str | None:
        """Why what the meter keeps may leave it as a value (a file, JSON, a logger, a
        caller), or None when every use is seen and only formats it as a number.

        The fix makes the meter hold tensors: `f"{m.avg:.3f}"` prints the same, while
        `print(m.avg)`, `OrderedDict(loss=m.avg)` or `return m` hand on `tensor(...)`.
        """
        if not isinstance(receiver, cst.Name):
            return f"`{short(receiver)}` is not a local name, so its uses cannot be seen"
        access = self.md.access(receiver)
        if access is None or not access.referents or any(
                not isinstance(r, Assignment) or not isinstance(r.node, cst.Name)
                or isinstance(self.md.parent(r.node), cst.Param) for r in access.referents):
            return f"`{receiver.value}` is not made in this function, so its uses cannot be seen"
        if any(not isinstance(r.scope, FunctionScope) for r in access.referents):
            # A module's name may be imported and used by other modules.
            return f"`{receiver.value}` is not made in a function, so its uses cannot be seen"
        # Every use of what the name may hold, in the function that makes it and in the
        # functions nested in it: the update may sit in a closure (`def run(loader)` in
        # `validate`) while the maker hands the meter on (`ProgressMeter([losses])`).
        # LibCST keeps accesses in sets: walk them in source order, so that the message
        # names the first escaping use, the same one on every run.
        uses = {id(use): use for r in access.referents for use in r.references}
        for other in sorted(uses.values(), key=lambda a: self.md.source_order(a.node)):
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


def line_with(small: cst.BaseSmallStatement, replaced: cst.BaseCompoundStatement,
              ) -> cst.SimpleStatementLine:
    """``small`` as a statement line that keeps the comments above ``replaced``."""
    return cst.SimpleStatementLine([small], leading_lines=replaced.leading_lines)


def _local_name(key: cst.BaseExpression) -> str:
    """A local variable name for the sum of a dict entry: `loss_sum` for `["loss"]`."""
    if isinstance(key, cst.SimpleString):
        text = str(key.evaluated_value)
        if text.isidentifier() and not keyword.iskeyword(text):
            return f"{text}_sum"
    return "entry_sum"


def _host_function(rule: AccumulateOnDevice, increment: cst.BaseExpression,
                   reads: list[HostRead]) -> str | None:
    """The qualified name of a `math` function applied to a read in ``increment``
    (`math.log10(1 / mse.item())`), or None."""
    read_ids = {id(r.node) for r in reads}
    found: list[str] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> bool:
            if id(node) in read_ids:
                return False
            names = [q for q in rule.md.qualified_names(node.func) if q.startswith("math.")]
            if names and any(rule.md.is_ancestor(node, r.node) for r in reads):
                found.append(sorted(names)[0])
            return True

    increment.visit(Calls())
    return found[0] if found else None


def _conversion_after(holder: cst.CSTNode) -> str:
    """What converts, after the loop, the device sum or list that ``holder`` fills."""
    if isinstance(holder, cst.Call) and isinstance(holder.func, cst.Attribute):
        return f"`{code_of(holder.func.value)} = to_host({code_of(holder.func.value)}, \"item\")`"
    target = holder.target if isinstance(holder, cst.AugAssign) else (
        holder.targets[0].target if isinstance(holder, cst.Assign) else holder)
    text = code_of(target)
    return f"`{text} = float({text})`"


def _names_in(expr: cst.CSTNode) -> list[cst.Name]:
    """Every Name in ``expr`` (outside lambdas)."""
    found: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.append(node)

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

    expr.visit(Names())
    return found


def _is_text(expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is certainly a ``str``: a string literal or f-string, ``%`` or
    ``.format`` of one, ``str(...)``, or a conditional expression of two such."""
    if isinstance(expr, (cst.FormattedString, cst.ConcatenatedString)):
        return not isinstance(expr, cst.ConcatenatedString) or not any(
            isinstance(part, cst.SimpleString) and "b" in part.prefix.lower()
            for part in (expr.left, expr.right))
    if isinstance(expr, cst.SimpleString):
        return "b" not in expr.prefix.lower()
    if isinstance(expr, cst.IfExp):
        return _is_text(expr.body) and _is_text(expr.orelse)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo):
        return _is_text(expr.left)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name) and func.value == "str":
            return True
        return (isinstance(func, cst.Attribute) and func.attr.value == "format"
                and _is_text(func.value))
    return False


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
        self.reason = ""

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
            elif isinstance(node.operator, cst.Divide) and _holds_read(node.right, self.reads) and (
                    not _holds_read(node.left, self.reads) and not _is_unit(node.left)):
                # torch computes `c / t` as `t.reciprocal() * c`: two roundings where
                # Python's `c / x` has one (measured: 29% of float64 values differ for
                # c = 3). `1 / t` and `t / u` are exact; `t / c` is on the CPU only
                # (see `_host_divisor`).
                self.ok = False
                self.reason = "divisor"
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


def _is_unit(expr: cst.BaseExpression) -> bool:
    """The literal 1 or -1 (`1 / t` is computed exactly by torch's reciprocal)."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus,
                                                                            cst.Plus)):
        expr = expr.expression
    if isinstance(expr, cst.Integer):
        return expr.evaluated_value == 1
    if isinstance(expr, cst.Float):
        return expr.evaluated_value == 1.0
    return False


def _numeric_spec(spec: str) -> bool:
    """A format spec that prints a number the same from a 0-dim tensor (`.3f`, `6.2e`, `%`)."""
    return bool(re.fullmatch(r"[^{}]*[eEfFgG%]", spec))


#: Why a sum over parameters is an unsafe fix.
_SPREAD = ("the loop goes over parameters, which a model split across devices keeps on "
           "several, and a sum on one device cannot add a value from another")
#: Methods of a module that list its parameters or buffers.
_PARAMETER_METHODS = frozenset({"parameters", "named_parameters", "buffers",
                                "named_buffers"})


def _parameters(iterable: cst.BaseExpression) -> bool:
    """``model.parameters()``, ``zip(names, self.master_params)``, ``group["params"]``:
    by a module's methods, or by a name that says parameters."""
    if isinstance(iterable, cst.Call):
        func = iterable.func
        if isinstance(func, cst.Attribute):
            return func.attr.value in _PARAMETER_METHODS
        if isinstance(func, cst.Name) and func.value in ("zip", "enumerate", "list",
                                                         "reversed", "sorted"):
            return any(_parameters(arg.value) for arg in iterable.args)
        return False
    if isinstance(iterable, cst.Attribute):
        word = iterable.attr.value
    elif isinstance(iterable, cst.Name):
        word = iterable.value
    elif isinstance(iterable, cst.Subscript) and len(iterable.slice) == 1 and isinstance(
            iterable.slice[0].slice, cst.Index) and isinstance(
            iterable.slice[0].slice.value, cst.SimpleString):
        word = str(iterable.slice[0].slice.value.evaluated_value)
    else:
        return False
    return word.lower().endswith(("params", "parameters"))


def _holds_read(expr: cst.CSTNode, read_nodes: set[int]) -> bool:
    """Whether ``expr`` is or contains one of the reads (by node id)."""
    return any(id(node) in read_nodes for node, _ in walk(expr))


def _power_of_two(node: cst.BaseExpression) -> bool:
    """A number literal that is a power of two (`4`, `0.5`): dividing by it is exact."""
    if not isinstance(node, (cst.Integer, cst.Float)):
        return False
    value = node.evaluated_value
    return value > 0 and math.frexp(value)[0] == 0.5
