"""NSY204 stop-gradient-read."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
from libcst.metadata.scope_provider import Assignment

from ..analysis import HostRead, Kind
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._device import dtype_family
from ._helpers import code_of, detached, short
from ._hoist import add_conversions, binding_statement, host_uses, number_conversion
from .base import Rule, RuleContext

_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)
#: Elementwise methods that keep their receiver's dtype.
_SAME_DTYPE_STEPS = frozenset({"abs", "neg", "square", "sqrt", "exp", "log", "detach"})
#: Reductions over all elements that keep a floating dtype (and give a 0-dim tensor).
_FLOAT_REDUCTIONS = frozenset({"mean", "sum", "std", "var", "norm", "max", "min", "amax",
                               "amin", "median", "nanmean", "logsumexp", "prod"})
#: Of those, the ones that also keep integer dtypes.
_ANY_REDUCTIONS = frozenset({"max", "min", "amax", "amin", "median"})


class StopGradientRead(Rule):
    """
    ## What it does
    Finds scalar reads used as constants in tensor arithmetic — `x / x.norm().item()`,
    `x - x.mean().item()`, `logits * scale.item()` — and uses the detached tensor
    instead: `x / x.norm().detach()`. `.detach()` keeps what `.item()` did for
    autograd (the value is a constant: no gradient flows through it) without
    copying it to the host. A read in host arithmetic whose result only feeds tensor
    arithmetic (`advantage = R - value.item()` followed by `-log_prob * advantage`)
    is found too; where that result also reaches host code, it is converted back
    there, as NSY201 does.

    ## Why is this slow?
    The read waits for the device to finish the tensor it reads, and under
    `torch.compile` splits the graph in two, only to send the number straight back
    to the device as an operand. The detached tensor never leaves the device.

    ## Example
    ```python
    import torch

    x = torch.arange(6, dtype=torch.float32)
    for _ in range(2):
        x = x - x.mean().item()
        x = x / x.norm().item()
    print(x)
    ```

    ## Use instead
    ```python
    import torch

    x = torch.arange(6, dtype=torch.float32)
    for _ in range(2):
        x = x - x.mean().detach()
        x = x / x.norm().detach()
    print(x)
    ```

    ## Fix safety
    Safe when the value read is a reduction over all elements (`mean`, `norm`,
    `std`, `max`, ... without arguments) of the very tensor it is combined with:
    it then has that tensor's dtype and no dimensions, so the result has the same
    dtype, shape and value as with the Python number.

    Unsafe otherwise. A Python number never changes the dtype of a tensor it is
    combined with, but a 0-dim tensor can: a float32 value with a float16 0-dim
    tensor gives float32 (where the Python number gave float16), a float64 value
    with an integer tensor gives float64 (where the Python number gave float32);
    a value of shape `(1,)` broadcasts a 0-dim operand to shape `(1,)`; and on GPUs
    a Python number is applied at the operation's internal precision while a
    device tensor is first converted to the other operand's dtype, so the last bit
    may differ. Results from host arithmetic (`R - value.item()`) were computed in
    float64 and are now computed in the tensor's dtype.

    ## When not to apply
    When the number is also needed on the host in the same step (printed, logged,
    compared in an `if`), the read happens anyway; read it once and reuse the
    Python number.
    """

    code = "NSY204"
    name = "stop-gradient-read"
    summary = "`.item()` used as a constant in tensor arithmetic: use `.detach()` instead"
    fix_kind = "safe/unsafe"
    cost = "sync and graph break"
    triggers = (".item(", "float(")
    signals = Signal.READ

    def __init__(self, context: RuleContext) -> None:
        super().__init__(context)
        self._plain_known: dict[cst.BaseExpression, bool] = {}

    def visit_Call(self, node: cst.Call) -> None:
        read = self.analysis.host_read(node)
        if read is None or read.how not in ("item", "float"):
            return
        parent = self.md.parent(node)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, _ARITHMETIC):
            other = parent.right if parent.left is node else parent.left
            if self.analysis.kind(other) is Kind.TENSOR:
                self._in_tensor_arithmetic(read, other)
                return
        self._feeding_tensor_arithmetic(read)

    # -- the read is an operand of tensor arithmetic ---------------------------------------

    def _in_tensor_arithmetic(self, read: HostRead, other: cst.BaseExpression) -> None:
        exact = read.certain and self._same_dtype_scalar(read, other)
        message = f"`{short(read.node)}` is used as a constant in tensor arithmetic"
        rewrite = Rewrite(f"Use `{short(read.tensor)}.detach()`: the same constant for autograd, "
                          "without the host copy")
        if not exact:
            rewrite = Rewrite(rewrite.message + " (unsafe: a 0-dim tensor can change the "
                              "result's dtype, shape or last bit where a Python number "
                              "does not)").unsafe()
        self.report(read.node, message + "; use `.detach()` to keep it on the device",
                    rewrite.replace(read.node, detached(read.tensor)))

    def _same_dtype_scalar(self, read: HostRead, other: cst.BaseExpression) -> bool:
        """Whether the read tensor is a full reduction of ``other`` that keeps its dtype."""
        if read.how == "float" and dtype_family(self.analysis, read.tensor) != "float":
            return False
        chain = read.tensor
        reduction = None
        if isinstance(chain, cst.Call) and isinstance(chain.func, cst.Attribute) and (
            not chain.args
        ):
            reduction = chain.func.attr.value
            chain = chain.func.value
        elif isinstance(chain, cst.Call) and len(chain.args) == 1 and not chain.args[0].keyword:
            names = self.md.qualified_names(chain.func)
            reduction = next((q.rsplit(".", 1)[-1] for q in names if q.startswith("torch.")
                              and q.count(".") == 1), None)
            chain = chain.args[0].value
        if reduction not in _FLOAT_REDUCTIONS:
            return False
        while isinstance(chain, cst.Call) and isinstance(chain.func, cst.Attribute) and (
            not chain.args and chain.func.attr.value in _SAME_DTYPE_STEPS
        ):
            chain = chain.func.value
        if not _pure(other) or _code(chain) != _code(other):
            return False
        if reduction in _ANY_REDUCTIONS:
            return True
        # mean/std/... fail on integers; sum/prod of integers give int64: floats only.
        return reduction not in ("sum", "prod") or dtype_family(self.analysis, other) == "float"

    # -- the read's host result feeds tensor arithmetic ------------------------------------

    def _feeding_tensor_arithmetic(self, read: HostRead) -> None:
        """``advantage = R - value.item()`` where ``advantage`` only meets tensors."""
        statement = self.md.small_statement_of(read.node)
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
            return
        target = statement.targets[0].target
        if not isinstance(target, cst.Name) or not self._host_arithmetic(statement.value,
                                                                         read.node):
            return
        loop = self.analysis.loops.enclosing_loop(statement)
        scope = self.md.scope(target)
        if loop is None or scope is None:
            return
        tensor_uses: list[cst.CSTNode] = []
        bound_before = False
        for assignment in scope.assignments[target.value]:
            if not isinstance(assignment, Assignment):
                return
            if assignment.node is not target:
                holder = binding_statement(self.md, assignment.node)  # type: ignore[arg-type]
                if holder is None or self.md.is_ancestor(loop, holder):
                    return  # bound elsewhere in the loop: not this value everywhere
                bound_before = bound_before or (
                    self.md.position(holder)[0] < self.md.position(loop)[0])
            for access in sorted(assignment.references,
                                 key=lambda a: self.md.source_order(a.node)):
                if self._meets_tensor(access.node):
                    where = self.md.statement_of(access.node)
                    if where is not None and self.md.is_ancestor(loop.body, where):
                        tensor_uses.append(where)
        if not tensor_uses:
            return
        holder = self.md.statement_of(statement)
        message = (f"`{short(read.node)}` is copied to the host only to be used in tensor "
                   f"arithmetic through `{target.value}`; use `.detach()` to keep it on the "
                   "device")
        uses = host_uses(self.md, target.value, scope, loop, [holder, *tensor_uses])
        if isinstance(uses, str):
            self.report(read.node, message + f" (no automatic fix: {uses})")
            return
        if (uses.before or uses.after_loop) and not bound_before:
            self.report(read.node, message + f" (no automatic fix: `{target.value}` is also "
                                             "read as a Python number where it may be unbound)")
            return
        rewrite = Rewrite(f"Keep `{target.value}` a detached tensor (unsafe: it was computed "
                          "in float64 on the host, now in the tensor's dtype and shape)").unsafe()
        rewrite = rewrite.replace(read.node, detached(read.tensor))
        conversion, rewrite = number_conversion(self.analysis, target.value, None, rewrite)
        self.report(read.node, message, add_conversions(rewrite, uses, loop, conversion))

    def _host_arithmetic(self, expr: cst.BaseExpression, read: cst.CSTNode) -> bool:
        """Arithmetic of host numbers around exactly this one read.

        Walks down from ``expr``: at each operation one side must be a plain operand
        (no call, so not the read) and the other holds the read. Plainness is
        remembered per node, so that the reads of one long sum cost linear time
        together (asking which side holds the read walked to the root at every
        level: cubic in the number of reads).
        """
        while expr is not read:
            if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
                if self._plain(expr.left):
                    expr = expr.right
                elif self._plain(expr.right):
                    expr = expr.left
                else:
                    return False  # both sides hold a call: not exactly one read
            elif isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
                expr = expr.expression
            else:
                return False
        return True

    def _plain(self, expr: cst.BaseExpression) -> bool:
        """:func:`_plain_operand`, remembered per node (of this module)."""
        verdict = self._plain_known.get(expr)
        if verdict is None:
            verdict = self._plain_known[expr] = _plain_operand(expr, self._plain)
        return verdict

    def _meets_tensor(self, use: cst.CSTNode) -> bool:
        parent = self.md.parent(use)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, _ARITHMETIC):
            other = parent.right if parent.left is use else parent.left
            return self.analysis.kind(other) is Kind.TENSOR
        return False


def _pure(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name):
        return True
    if isinstance(expr, cst.Attribute):
        return _pure(expr.value)
    return False


def _code(node: cst.CSTNode) -> str:
    return "".join(code_of(node).split())


def _plain_operand(expr: cst.BaseExpression,
                   plain: Callable[[cst.BaseExpression], bool] | None = None) -> bool:
    """Numbers, names and attributes, and arithmetic of them: no calls, no reads.

    ``plain`` answers for the operands (a remembering version of this function)."""
    inner = plain or _plain_operand
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return inner(expr.expression)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
        return inner(expr.left) and inner(expr.right)
    return _pure(expr)
