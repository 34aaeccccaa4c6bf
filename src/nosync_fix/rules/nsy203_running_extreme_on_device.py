"""NSY203 running-extreme-on-device."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata.scope_provider import Assignment, Scope

from ..analysis import HostRead, Kind
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._device import dtype_family, float_literal_exact, int_literal_small, literal_value
from ._helpers import code_of, detached, method_call, short, torch_ref
from ._hoist import (
    add_conversions,
    after_loop,
    binding_statement,
    host_uses,
    is_conversion,
    number_conversion,
    numeric_type,
    unpacked_value,
)
from .base import Rule

_SYMBOL = {cst.LessThan: "<", cst.GreaterThan: ">", cst.LessThanEqual: "<=",
           cst.GreaterThanEqual: ">="}


@dataclass(frozen=True)
class _Update:
    """One statement that may replace the running extreme with a device value."""

    #: The statement replaced: the Assign (`best = max(...)`) or the If.
    node: cst.CSTNode
    #: The read whose value may become the new extreme.
    read: HostRead
    #: The comparison, as a template over ``{value}`` and ``{best}``.
    condition: str
    #: Whether the value (not the current extreme) is chosen when the comparison holds.
    value_wins: bool
    #: The name of the running extreme.
    name: str


class RunningExtremeOnDevice(Rule):
    """
    ## What it does
    Finds running extremes of device values in a loop — `best = max(best,
    loss.item())`, `low = min(low, float(t))`, and the if-form `if val.item() <
    best: best = val.item()` (or `if val < best: best = val.item()`) — and keeps
    the extreme on the device with `torch.where`. It is turned back into a Python
    number once, where the host needs it.

    ## Why is this slow?
    Each read makes the host wait for the device to finish all queued work, on
    every step, and under `torch.compile` splits the graph. Choosing on the device
    queues one tiny kernel and waits for nothing.

    ## Example
    ```python
    import torch

    best = float("inf")
    for step in range(5):
        loss = (torch.tensor(step, dtype=torch.float32) - 2) ** 2
        best = min(best, loss.item())
    print(best)
    ```

    ## Use instead
    ```python
    import torch

    best = float("inf")
    for step in range(5):
        loss = (torch.tensor(step, dtype=torch.float32) - 2) ** 2
        best = torch.where(loss < best, loss.detach(), best)
    best = float(best)
    print(best)
    ```

    ## Fix safety
    `torch.where` reproduces Python's rule exactly, where `torch.maximum` and
    `torch.minimum` would not: `max(a, b)` returns `b` only when `b > a`, so a NaN
    loss never replaces `best = max(best, x)` (and ties keep the first argument),
    whereas `torch.maximum` propagates NaN. The fix writes the comparison in the
    direction Python evaluates it (`max(x, best)` becomes
    `torch.where(best > x, best, x)`), and the if-form keeps its own comparison.

    In a Jupyter notebook, a fix that converts the value after a loop at a cell's top
    level is unsafe: stopping a loop is routine there and the kernel keeps its variables,
    so after an interrupt the conversion never runs and a tensor is left where the
    original left a number. Inside a function, whose locals the interrupt discards, the
    fix keeps its safety.

    The fix is safe when the read is certainly of a tensor whose dtype family
    matches the start value (a float start and a floating tensor, or an int start
    and an integer tensor) and the start value is held exactly by every dtype the
    tensor may have: `float("inf")`, `-math.inf`, `0.0`, `1.0` and other small
    powers of two are; `1e9` or `0.1` are not (float16 cannot hold them), so such
    starts make the fix unsafe, as do tensors of unknown dtype (an int tensor
    beating a float start makes Python's result an int, the device's a float).
    A start of `None` gets no fix. The value is converted back with `float()` or
    `int()` after the loop, or before a periodic block that reads it.

    ## When not to apply
    When the extreme is read on every step (printed each epoch, or compared in an
    `if` that saves a checkpoint), there is nothing to save; the if-form with more
    statements than the assignment is a branch (NSY101/NSY103), not this rule.
    """

    code = "NSY203"
    name = "running-extreme-on-device"
    summary = "Running `max`/`min` of `.item()` reads in a loop: choose on the device, read once"
    fix_kind = "safe/unsafe"
    cost = "sync and graph break"
    triggers = (".item(", "float(", "int(")
    signals = Signal.READ | Signal.CONDITION

    def __init__(self, context) -> None:  # type: ignore[no-untyped-def]
        super().__init__(context)
        self._plans: dict[tuple[int, str, int], Rewrite | str] = {}

    # -- visiting ----------------------------------------------------------------------------

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        update = self._builtin_update(node.targets[0].target.value, node.value, node)
        if update is not None:
            self._candidate(update)

    def visit_If(self, node: cst.If) -> None:
        update = self._if_update(node)
        if update is not None:
            self._candidate(update)

    def _builtin_update(self, name: str, value: cst.BaseExpression,
                        node: cst.CSTNode) -> _Update | None:
        """``name = max(name, read)`` and the three other orders and functions."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
            return None
        function = value.func.value
        if function not in ("max", "min") or not self.md.qualified_names(value.func) & {
            f"builtins.{function}"
        }:
            return None
        if len(value.args) != 2 or any(a.keyword or a.star for a in value.args):
            return None
        first, second = (a.value for a in value.args)
        better = ">" if function == "max" else "<"
        # Python's max(a, b) keeps a unless b > a; min(a, b) keeps a unless b < a.
        if _is_name(first, name):
            read = self._read(second)
            update = _Update(node, read, "{value} " + better + " {best}", True, name)  # type: ignore[arg-type]
        elif _is_name(second, name):
            read = self._read(first)
            update = _Update(node, read, "{best} " + better + " {value}", False, name)  # type: ignore[arg-type]
        else:
            return None
        return update if read is not None else None

    def _if_update(self, node: cst.If) -> _Update | None:
        """``if val.item() < best: best = val.item()`` (and ``if val < best:``)."""
        if node.orelse is not None or not isinstance(node.body, cst.IndentedBlock):
            return None
        if len(node.body.body) != 1:
            return None
        line = node.body.body[0]
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        assign = line.body[0]
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        target = assign.targets[0].target
        if not isinstance(target, cst.Name):
            return None
        read = self._read(assign.value)
        test = node.test
        if read is None or not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return None
        operator = test.comparisons[0].operator
        if type(operator) not in _SYMBOL:
            return None
        left, right = test.left, test.comparisons[0].comparator
        if _is_name(right, target.value) and self._same_value(left, read):
            condition = "{value} " + _SYMBOL[type(operator)] + " {best}"
        elif _is_name(left, target.value) and self._same_value(right, read):
            condition = "{best} " + _SYMBOL[type(operator)] + " {value}"
        else:
            return None
        return _Update(node, read, condition, True, target.value)

    def _read(self, expr: cst.BaseExpression) -> HostRead | None:
        read = self.analysis.host_read(expr)
        if read is not None and read.how in ("item", "float", "int"):
            return read
        return None

    def _same_value(self, compared: cst.BaseExpression, read: HostRead) -> bool:
        """Whether the compared side is the value assigned: the same read, or its tensor."""
        other = self._read(compared)
        if other is not None:
            return other.how == read.how and _same_code(other.tensor, read.tensor)
        return (read.how in ("item", "float") and self.analysis.kind(compared) is Kind.TENSOR
                and _same_code(compared, read.tensor))

    def _candidate(self, update: _Update) -> None:
        loop = self.analysis.loops.enclosing_loop(update.node)
        if loop is None:
            return
        when = self.analysis.loops.every_step(update.node)
        message = (f"`{short(update.node)}` reads the device {when}; keep the running "
                   "extreme on the device (torch.where) and read it once")
        plan = self._plan(update, loop)
        if isinstance(plan, str):
            self.report(update.node, message + f" (no automatic fix: {plan})")
        else:
            self.report(update.node, message, plan)

    # -- planning ----------------------------------------------------------------------------

    def _plan(self, update: _Update, loop: cst.For | cst.While) -> Rewrite | str:
        scope = self.md.scope(update.node)
        key = (id(scope), update.name, id(loop))
        if key not in self._plans:
            self._plans[key] = self._make_plan(update.name, scope, loop)
        return self._plans[key]

    def _make_plan(self, name: str, scope: Scope | None,
                   loop: cst.For | cst.While) -> Rewrite | str:
        if scope is None:
            return "cannot resolve the variable's scope"
        updates: list[_Update] = []
        literals: list[cst.BaseExpression] = []
        read_after = False
        enclosing = self.analysis.loops.enclosing_loops(loop)
        for assignment in scope.assignments[name]:
            if not isinstance(assignment, Assignment) or not isinstance(assignment.node,
                                                                        cst.Name):
                return f"`{name}` is not a plain local variable"
            holder = binding_statement(self.md, assignment.node)
            value = (getattr(holder, "value", None) if holder is not None
                     else unpacked_value(self.md, assignment.node))
            update = self._update_of(holder, name) if holder is not None else None
            if update is not None and self.md.is_ancestor(loop.body, update.node):
                if self.analysis.loops.enclosing_loop(update.node) is not loop:
                    return f"`{name}` is updated in nested loops"
                updates.append(update)
            elif value is not None and numeric_type(value) is not None:
                literals.append(value)
            elif value is not None and is_conversion(value, name):
                continue
            elif isinstance(value, cst.Name) and value.value == "None":
                return f"`{name}` starts as None"
            elif holder is not None and after_loop(self.md, holder, loop, enclosing):
                read_after = read_after or isinstance(holder, cst.AugAssign)
            else:
                return f"`{name}` is also assigned a value that is not a number"
        if not updates:
            return "no read to move"
        if not all(_repeatable(u.read.tensor) for u in updates):
            return "the value is computed in the same expression; bind it to a name first"
        if not literals:
            return f"`{name}` does not start as a number"
        uses = host_uses(self.md, name, scope, loop, [u.node for u in updates])
        if isinstance(uses, str):
            return uses
        uses.after_loop = uses.after_loop or read_after

        kind, why_unsafe = self._number_type(name, literals, updates)
        message = f"Keep `{name}` on the device with torch.where; read it once"
        if why_unsafe:
            message += f" (unsafe: {why_unsafe})"
        rewrite = Rewrite(message)
        if why_unsafe:
            rewrite = rewrite.unsafe()
        torch, rewrite = torch_ref(self.analysis, rewrite)
        for update in updates:
            rewrite = rewrite.replace(update.node, self._replacement(update, torch))
        conversion, rewrite = number_conversion(self.analysis, name, kind, rewrite)
        return add_conversions(rewrite, uses, loop, conversion)

    def _update_of(self, holder: cst.CSTNode, name: str) -> _Update | None:
        """The update a binding statement belongs to (the If around it for the if-form)."""
        if isinstance(holder, cst.Assign):
            update = self._builtin_update(name, holder.value, holder)
            if update is not None:
                return update
            line = self.md.parent(holder)
            block = self.md.parent(line) if line is not None else None
            statement = self.md.parent(block) if block is not None else None
            if isinstance(statement, cst.If):
                update = self._if_update(statement)
                if update is not None and update.name == name:
                    return update
        return None

    def _number_type(self, name: str, literals: list[cst.BaseExpression],
                     updates: list[_Update]) -> tuple[str | None, str]:
        """The Python type of the extreme ("float", "int" or None) and why the fix is
        unsafe ("" when it is safe)."""
        types = {numeric_type(v) for v in literals}
        families = {self._value_type(u.read) for u in updates}
        if not all(u.read.certain for u in updates):
            return ("float" if types == {"float"} else None,
                    "the value may not be a tensor")
        if len(types) != 1 or len(families) != 1 or None in families or types != families:
            return None, (f"`{name}` and the values compared with it are not certainly of "
                          "the same type (float or int): Python keeps the type of the winner")
        kind = types.pop()
        values = [literal_value(v) for v in literals]
        exact = float_literal_exact if kind == "float" else int_literal_small
        if not all(v is not None and exact(v) for v in values):
            return kind, (f"float16 or small integer tensors cannot hold every start value "
                          f"of `{name}` exactly")
        return kind, ""

    def _value_type(self, read: HostRead) -> str | None:
        if read.how == "float":
            return "float"
        family = dtype_family(self.analysis, read.tensor)
        if read.how == "int":
            return "int"
        return {"float": "float", "int": "int", "bool": "int"}.get(family or "")

    def _replacement(self, update: _Update, torch: str) -> cst.CSTNode:
        read = update.read
        compared = read.tensor
        if self._needs_long(read):
            compared = method_call(compared, "long")  # int() truncates towards zero, as .long()
        kept = detached(compared) if not self._needs_long(read) else method_call(
            detached(read.tensor), "long")
        condition = update.condition.format(value=code_of(compared), best=update.name)
        chosen, other = (code_of(kept), update.name) if update.value_wins else (
            update.name, code_of(kept))
        new = cst.parse_statement(
            f"{update.name} = {torch}.where({condition}, {chosen}, {other})")
        if isinstance(update.node, cst.If):
            return new.with_changes(leading_lines=update.node.leading_lines)
        assert isinstance(new, cst.SimpleStatementLine)
        return new.body[0]

    def _needs_long(self, read: HostRead) -> bool:
        family = dtype_family(self.analysis, read.tensor)
        return (read.how == "int" and family != "int") or (read.how == "item"
                                                             and family == "bool")


def _is_name(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _repeatable(expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` may be written twice (compared, then chosen): names and attributes,
    with subscripts by names and numbers, and a few argument-free tensor methods."""
    if isinstance(expr, cst.Name):
        return True
    if isinstance(expr, cst.Attribute):
        return _repeatable(expr.value)
    if isinstance(expr, cst.Subscript):
        return _repeatable(expr.value) and all(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Integer, cst.Name))
            for e in expr.slice)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and not expr.args:
        return expr.func.attr.value in ("detach", "mean", "sum", "max", "min", "float",
                                         "squeeze") and _repeatable(expr.func.value)
    return False


def _same_code(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    return "".join(code_of(a).split()) == "".join(code_of(b).split())
