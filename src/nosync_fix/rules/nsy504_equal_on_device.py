"""NSY504 equal-on-device."""

from __future__ import annotations

import libcst as cst

from ..analysis import Kind
from ..analysis.base import positional_args
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._helpers import method_call, parenthesized, short
from ._host import host_only
from ._owners import owner
from ._scalars import TENSOR_ARITHMETIC, is_model_argument
from .base import Rule

_LOOSE = (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation, cst.IfExp, cst.Lambda,
          cst.NamedExpr)


class EqualOnDevice(Rule):
    """
    ## What it does
    Finds `torch.equal(a, b)` and `a.equal(b)` on hot paths and, where the result
    is only used as a truth value (the test of an `if`, `while` or conditional
    expression) or in tensor arithmetic, replaces it with
    `a.shape == b.shape and (a == b).all()`: the shapes are compared on the host
    (they are known without a wait), the elements on the device. Other uses are
    reported without a fix.

    ## Why is this slow?
    `torch.equal` returns a Python bool: the host waits for the device to compare
    every element, and `torch.compile` cannot put the result in a graph (a graph
    break, "data dependent operator"). `(a == b).all()` is an ordinary tensor
    operation; a branch on it can then become `torch.where` or `torch.cond`
    (NSY101, NSY102), and arithmetic on it needs no wait at all.

    ## Example
    ```python
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    target = torch.tensor([1, 2, 3], device=device)
    scores = torch.tensor([0.5, 0.25, 0.25], device=device)
    for step in range(3):
        pred = torch.tensor([1, 2, step + 1], device=device)
        bonus = scores * torch.equal(pred, target)
    print(bonus)
    ```

    ## Use instead
    ```python
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    target = torch.tensor([1, 2, 3], device=device)
    scores = torch.tensor([0.5, 0.25, 0.25], device=device)
    for step in range(3):
        pred = torch.tensor([1, 2, step + 1], device=device)
        bonus = scores * (pred.shape == target.shape and (pred == target).all())
    print(bonus)
    ```

    ## Fix safety
    Unsafe, although the result decides as `torch.equal` did on every input:
    tensors of different shapes give False without comparing elements (`a == b`
    alone would broadcast a shape `[1]` tensor, or raise), and for one shape the
    two agree, NaN included (never equal), across dtypes (both compare the
    values). In arithmetic the result acts as the Python bool did: False, or a
    0-dim bool tensor, which never widens the other operand's dtype. The fix is
    marked unsafe because the result is now a tensor, not a `bool`: code that
    stores it, or tests `is True`, sees the difference. Operands are repeated in
    the fix, so it is offered only where they are pure (no call with side
    effects, no random draw).

    Inside an `assert`, `torch.equal` is left to NSY401, which rewrites the whole
    condition.

    Not reported when both tensors certainly live on the CPU (tokenizer output with
    `return_tensors="pt"`, `device="cpu"`, `.cpu()` results): there is no device to
    wait for. A name bound more than once counts by the binding that reaches the
    comparison: `ids = tokenizer(...).input_ids`, compared, then `ids = ids.to(device)`
    below is still a CPU tensor at the comparison.

    ## When not to apply
    When the tensors live on the CPU in a way the rule cannot see: there is no device
    to wait for, and nothing is gained. When the host needs the
    answer anyway (to decide whether to save a checkpoint, for instance).
    """

    code = "NSY504"
    name = "equal-on-device"
    summary = "`torch.equal(a, b)` on a hot path: `(a == b).all()` stays on the device"
    fix_kind = "unsafe"
    cost = "sync and graph break"
    triggers = ("equal(",)
    signals = Signal.DATA_DEPENDENT

    def visit_Call(self, node: cst.Call) -> None:
        operands = self._operands(node)
        if operands is None or host_only(self.analysis, node):
            return  # CPU tensors (tokenizer output, `.cpu()`): nothing to wait for
        found = owner(self.analysis, node)
        if found == "NSY401":
            return
        message = (f"`{short(node)}` waits for the device and breaks a compiled graph: "
                   "compare the shapes on the host and the elements on the device")
        in_test = found == "NSY101" and self._directly_in_test(node)
        if not in_test and not self._in_arithmetic(node):
            self.report(node, message + " (no automatic fix: the result is used as a Python "
                                        "bool here)")
            return
        if not all(self.analysis.effects.is_pure(o) for o in operands):
            self.report(node, message + " (no automatic fix: the operands would be evaluated "
                                        "twice, and they are not pure; compare their shapes "
                                        "first: `a.shape == b.shape and (a == b).all()`)")
            return
        left, right = (_loose(o) for o in operands)
        shapes = [cst.Attribute(parenthesized(o), cst.Name("shape")) for o in operands]
        same_shape = cst.Comparison(shapes[0], [cst.ComparisonTarget(cst.Equal(), shapes[1])])
        equal = cst.Comparison(left, [cst.ComparisonTarget(cst.Equal(), right)])
        new: cst.BaseExpression = cst.BooleanOperation(same_shape, cst.And(),
                                                       method_call(equal, "all"))
        parent = self.md.parent(node)
        if not (isinstance(parent, (cst.If, cst.While)) and parent.test is node):
            new = parenthesized(new)
        rewrite = Rewrite("Compare the shapes on the host and the elements on the device").unsafe()
        self.report(node, message, rewrite.replace(node, new))

    def _operands(self, node: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        args = positional_args(node)
        if len(node.args) == 2 and len(args) == 2 and (
            "torch.equal" in self.md.qualified_names(node.func)
        ):
            return args[0], args[1]
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "equal" and (
            len(node.args) == 1 and len(args) == 1
        ) and (self.analysis.kind(func.value) is Kind.TENSOR
               or is_model_argument(self.analysis, func.value)):
            return func.value, args[0]
        return None

    def _directly_in_test(self, node: cst.Call) -> bool:
        """The result feeds an ``if``/``while`` test through ``not``/``and``/``or`` only.

        Inside ``any(torch.equal(p, q) for ...)`` the result is still turned into a
        Python bool one by one (no sync saved), and the operands are often of
        different shapes, where ``(p == q).all()`` raises or broadcasts.
        """
        child: cst.CSTNode = node
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, (cst.If, cst.While, cst.IfExp)):
                return child is ancestor.test
            if not isinstance(ancestor, (cst.UnaryOperation, cst.BooleanOperation)):
                return False
            child = ancestor
        return False

    def _in_arithmetic(self, node: cst.Call) -> bool:
        parent = self.md.parent(node)
        if not isinstance(parent, cst.BinaryOperation) or not isinstance(parent.operator,
                                                                         TENSOR_ARITHMETIC):
            return False
        other = parent.right if parent.left is node else parent.left
        return self.analysis.kind(other) is Kind.TENSOR


def _loose(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` in parentheses when it binds more loosely than ``==``."""
    if isinstance(expr, _LOOSE) and not expr.lpar:
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr
