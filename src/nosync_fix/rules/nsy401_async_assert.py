"""NSY401 async-assert."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..analysis import Effect, Kind
from ..analysis.base import compares_with_text, positional_args, visit
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._branches import validation_guard
from ._helpers import method_call, parenthesized, short, torch_ref
from ._host import host_only
from .base import Rule

_COMPARISONS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual,
                cst.Equal, cst.NotEqual)
_MATH_PREDICATES = {"math.isnan": "isnan", "math.isinf": "isinf", "math.isfinite": "isfinite"}


@dataclass(frozen=True)
class _Condition:
    """A condition rewritten as a tensor: its expression, and whether its dtype is bool."""

    expression: cst.BaseExpression
    boolean: bool
    #: Whether a device value takes part (else the condition is a host one).
    device: bool
    certain: bool = True


class AsyncAssert(Rule):
    """
    ## What it does
    Finds `assert` statements whose condition is a device tensor
    (`assert torch.isfinite(loss)`, `assert (probs >= 0).all()`) or reads one
    (`assert loss.item() > 0`), and turns them into `torch._assert_async(condition,
    message)`, guarded by `if __debug__:` so that `python -O` still removes them.

    Validation guards (`if (x < 0).any(): raise ValueError("msg")`: an `if` on a device
    value whose branch is only a `raise`, with no `elif` / `else`) are reported without a
    fix: the `raise` is the program's own logic (not removed by `python -O`), it stops the
    code at its line, and a caller may catch it and go on, none of which
    `torch._assert_async` can keep (see Fix safety).

    Only asserts in hot training code are rewritten: a module's `forward`, a compiled
    function, a `*_step` function, or a loop of a function. Where the assert is the check
    itself it keeps raising `AssertionError` at its line, and is not reported (with
    `--all-paths`, reported without a fix): in a function that is no hot path, in a
    function named as a check (`assert_close`, `_check_outputs`, `verify_export`), in a
    module of a test folder (`tests/`, `testing/`) or a script named as a check
    (`check_model.py`), and in module-level code outside a training loop (one whose body
    calls `.backward()`, `.step()` or `.zero_grad()`).

    ## Why is this slow?
    `assert` calls `bool()` on its condition: the host waits until the device has
    computed it, every time the line runs. `.item()` in the condition also splits a
    compiled graph. `torch._assert_async` queues the check on the device and
    returns at once; a failure is raised later.

    ## Example
    ```python
    import torch


    def train_step(x):
        loss = (x ** 2).mean()
        assert torch.isfinite(loss), "loss is not finite"
        return loss


    print(train_step(torch.ones(4)))
    ```

    ## Use instead
    ```python
    import torch


    def train_step(x):
        loss = (x ** 2).mean()
        if __debug__:
            torch._assert_async(torch.isfinite(loss), "loss is not finite")
        return loss


    print(train_step(torch.ones(4)))
    ```

    ## Fix safety
    Always unsafe: a failing check behaves differently.

    - On CUDA the failure is a device-side assert raised at some later CUDA call,
      not at the `assert` line, and it leaves the CUDA context unusable: the
      process must restart. On the CPU, `torch._assert_async` raises at once, but a
      `RuntimeError`, not an `AssertionError` (an `except AssertionError` no
      longer catches it).
    - The message is passed only when it is a string literal: `assert` evaluates
      its message only on failure, `torch._assert_async` would evaluate it every
      time (and an f-string of a tensor would read the device). Asserts with other
      messages are reported without a fix.
    - Reads are replaced by the tensor they read (`loss.item() > 0` becomes `loss >
      0`; `int(t)` becomes `t.long()`, which truncates the same way, but does not
      raise for NaN or infinity as `int()` does). A comparison
      with a Python float then happens in the tensor's precision instead of in
      float64: a value within one rounding step of the bound can compare
      differently. `and`/`or`/`not` become `&`/`|`/`~` (both sides are evaluated),
      chained comparisons are split, `torch.equal(a, b)` becomes `(a == b).all()`
      (tensors of different shapes broadcast or raise instead of failing the
      assert), `torch.allclose(...)` becomes `torch.isclose(...).all()`, and
      `math.isfinite(t.item())` becomes `torch.isfinite(t)`.

    The condition must hold one element, as for `assert` (`assert (x > 0)` with
    several elements raises in both versions).

    A validation guard (`if cond: raise RuntimeError("msg")`) gets no fix, whatever it
    raises. On CUDA the async check fails at a later CUDA call: the code after the guard
    (a callback, a gradient step, a file write) runs on the values it was meant to stop,
    and the failure leaves the CUDA context unusable, so a caller that catches the
    exception (a pipeline retried with another seed) can no longer go on; on the CPU a
    `ValueError` or `TypeError` would become a `RuntimeError`. diffusers' guidance loop
    `if torch.isnan(loss): raise RuntimeError(...)` is such a guard.

    ## When not to apply
    When the assertion is expected to fail and the program recovers from it
    (`except AssertionError`), or when a failure must stop the program at that
    exact line. On CUDA, debug a failing async assert with
    `CUDA_LAUNCH_BLOCKING=1`.
    """

    code = "NSY401"
    name = "async-assert"
    summary = "`assert` on a device value: `torch._assert_async`, no wait"
    fix_kind = "unsafe"
    cost = "sync (and a graph break when it reads with `.item()`)"
    triggers = ("assert", "raise")
    signals = Signal.CONDITION | Signal.READ  # `x.item() is None` is a host test with a read

    def visit_If(self, node: cst.If) -> None:
        verdict = validation_guard(self.analysis, node)
        if verdict is not None:
            self.report(node, verdict.message, verdict.rewrite)

    def visit_Assert(self, node: cst.Assert) -> None:
        if host_only(self.analysis, node.test):
            return  # CPU tensors only: the assert waits for no device
        condition = self._convert(node.test)
        if condition is None:
            if self._reads_device(node.test):
                self.report(node, f"`{short(node)}` waits for the device: check it "
                                  "asynchronously with `torch._assert_async` (no automatic "
                                  "fix: the condition is not one tensor expression)")
            return
        if not condition.device:
            return
        message = f"`{short(node)}` waits for the device: check it asynchronously with " \
                  "`torch._assert_async`"
        checking = self._checking_code(node)
        if checking is not None:
            # Outside hot training code the assert is the check itself: it keeps raising
            # AssertionError where it fails. Reported (without a fix) only with --all-paths.
            if self.context.settings.all_paths:
                self.report(node, message + f" (no automatic fix: {checking}, where an "
                                            "`AssertionError` at this line is the point)")
            return
        line = self.md.parent(node)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1 or not (
            isinstance(self.md.parent(line), (cst.IndentedBlock, cst.Module))
        ):
            self.report(node, message + " (no automatic fix: the assert shares its line)")
            return
        if node.msg is not None and not _is_string_literal(node.msg):
            self.report(node, message + " (no automatic fix: the message is not a string "
                                        "literal, and `_assert_async` would build it every "
                                        "time)")
            return
        torch, rewrite = torch_ref(self.analysis, Rewrite(
            "Check the condition on the device with `torch._assert_async`").unsafe())
        args = [cst.Arg(condition.expression)]
        if node.msg is not None:
            args.append(cst.Arg(node.msg))
        call = cst.Call(func=cst.parse_expression(f"{torch}._assert_async"), args=args)
        guarded = cst.If(
            test=cst.Name("__debug__"),
            body=cst.IndentedBlock([cst.SimpleStatementLine(
                [cst.Expr(call)], trailing_whitespace=line.trailing_whitespace)]),
            leading_lines=line.leading_lines,
        )
        self.report(node, message, rewrite.replace(line, guarded))

    def _checking_code(self, node: cst.Assert) -> str | None:
        """Why ``node`` is checking code rather than hot training code, or None.

        A check script, a test helper, module-level code of a script, a function that is
        no hot path: there the assert is what the code is for, and it must keep raising
        ``AssertionError`` at its line (a test runner or an ``except`` expects it).
        """
        if self.analysis.hot.reason(node) is None:
            return "not on a hot path"
        functions = [a for a in self.md.ancestors(node) if isinstance(a, cst.FunctionDef)]
        for func in functions:
            if _is_checker_name(func.name.value):
                return f"`{func.name.value}` is a check"
        if _is_checking_file(self.context.filename):
            return "a test or check module"
        if not functions and not any(_trains(loop)
                                     for loop in self.analysis.loops.enclosing_loops(node)):
            return "module-level code of a script, outside a training loop"
        return None

    # -- the condition as a tensor ------------------------------------------------------------

    def _convert(self, expr: cst.BaseExpression) -> _Condition | None:
        """``expr`` as a tensor whose truth is ``bool(expr)``, or None."""
        read = self.analysis.host_read(expr)
        if read is not None:
            if read.how in ("item", "float", "bool"):
                return _Condition(read.tensor, False, True, read.certain)
            if read.how == "int":
                dtype = self.analysis.tensors.dtype_class(read.tensor)
                tensor = read.tensor if dtype in ("int", "bool") else method_call(read.tensor,
                                                                                 "long")
                return _Condition(tensor, dtype == "bool", True, read.certain)
            return None
        if isinstance(expr, cst.Comparison):
            return self._comparison(expr)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            inner = self._convert(expr.expression)
            if inner is None or not inner.device:
                return None
            if inner.boolean:
                negated: cst.BaseExpression = cst.UnaryOperation(
                    cst.BitInvert(), parenthesized(inner.expression))
            else:
                torch = self.analysis.torch_name() or "torch"
                negated = cst.Call(cst.parse_expression(f"{torch}.logical_not"),
                                   [cst.Arg(inner.expression)])
            return _Condition(negated, True, True, inner.certain)
        if isinstance(expr, cst.BooleanOperation):
            left, right = self._convert(expr.left), self._convert(expr.right)
            if left is None or right is None or not (left.device and right.device):
                return None
            if not (left.boolean and right.boolean):
                return None
            if self.analysis.effects.of(expr.right) & ~Effect.READ:
                return None  # `and` skipped the right side when the left decided; `&` won't
            operator = cst.BitAnd() if isinstance(expr.operator, cst.And) else cst.BitOr()
            return _Condition(
                cst.BinaryOperation(parenthesized(left.expression), operator,
                                    parenthesized(right.expression)),
                True, True, left.certain and right.certain)
        if isinstance(expr, cst.Call):
            special = self._special_call(expr)
            if special is not None:
                return special
        kind = self.analysis.kind(expr)
        if kind is Kind.TENSOR:
            dtype = self.analysis.tensors.dtype_class(expr)
            return _Condition(expr, dtype == "bool", True)
        if kind is Kind.HOST and not self._reads_device(expr):
            return _Condition(expr, False, False)
        return None

    def _comparison(self, expr: cst.Comparison) -> _Condition | None:
        if not all(isinstance(c.operator, _COMPARISONS) for c in expr.comparisons):
            return None
        operands = [expr.left] + [c.comparator for c in expr.comparisons]
        if compares_with_text(expr):
            return None if self._reads_device(expr) else _Condition(expr, False, False)
        converted = [self._operand(o) for o in operands]
        if any(c is None for c in converted):
            return None
        pairs: list[_Condition] = []
        for i, target in enumerate(expr.comparisons):
            left, right = converted[i], converted[i + 1]
            assert left is not None and right is not None
            if not (left.device or right.device):
                if len(expr.comparisons) > 1:
                    return None  # a host part of a chain: keep it simple
                return _Condition(expr, False, False)
            pairs.append(_Condition(
                cst.Comparison(left.expression, [cst.ComparisonTarget(target.operator,
                                                                      right.expression)]),
                True, True, left.certain and right.certain))
        if len(pairs) == 1:
            return pairs[0]
        if not all(self._repeatable(m) for m in operands[1:-1]):
            return None  # a middle operand is evaluated twice: it must be pure
        combined: cst.BaseExpression = parenthesized(pairs[0].expression)
        for pair in pairs[1:]:
            combined = cst.BinaryOperation(combined, cst.BitAnd(),
                                           parenthesized(pair.expression))
        return _Condition(combined, True, True, all(p.certain for p in pairs))

    def _repeatable(self, expr: cst.BaseExpression) -> bool:
        read = self.analysis.host_read(expr)
        if read is not None:
            expr = read.tensor
        return _is_simple(expr) or self.analysis.effects.is_pure(expr)

    def _operand(self, expr: cst.BaseExpression) -> _Condition | None:
        """A comparison operand: a read becomes its tensor, host values stay as they are."""
        read = self.analysis.host_read(expr)
        if read is not None:
            return self._convert(expr)
        kind = self.analysis.kind(expr)
        if kind is Kind.TENSOR:
            return _Condition(expr, False, True)
        if kind is Kind.HOST and not self._reads_device(expr):
            return _Condition(expr, False, False)
        return None

    def _special_call(self, call: cst.Call) -> _Condition | None:
        """``torch.equal``, ``torch.allclose`` and ``math.isnan``-style predicates."""
        qnames = self.md.qualified_names(call.func)
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        receiver_is_tensor = isinstance(func, cst.Attribute) and (
            self.analysis.kind(func.value) is Kind.TENSOR)
        torch = self.analysis.torch_name() or "torch"
        args = positional_args(call)
        if ("torch.equal" in qnames and len(call.args) == 2 and len(args) == 2) or (
            method == "equal" and receiver_is_tensor and len(call.args) == 1 and len(args) == 1
        ):
            left, right = (args if len(args) == 2 else [func.value, args[0]])  # type: ignore
            equal = cst.Comparison(left, [cst.ComparisonTarget(cst.Equal(), right)])
            return _Condition(method_call(equal, "all"), True, True)
        if "torch.allclose" in qnames:
            close = call.with_changes(func=cst.parse_expression(f"{torch}.isclose"))
            return _Condition(method_call(close, "all"), True, True)
        if method == "allclose" and receiver_is_tensor:
            close = call.with_changes(func=func.with_changes(attr=cst.Name("isclose")))
            return _Condition(method_call(close, "all"), True, True)
        for q in qnames:
            if q in _MATH_PREDICATES and len(call.args) == 1 and len(args) == 1:
                inner = self._operand(args[0])
                if inner is None or not inner.device:
                    return None
                predicate = cst.Call(cst.parse_expression(f"{torch}.{_MATH_PREDICATES[q]}"),
                                     [cst.Arg(inner.expression)])
                return _Condition(predicate, True, True, inner.certain)
        return None

    def _reads_device(self, expr: cst.BaseExpression) -> bool:
        """Whether evaluating ``expr`` as a condition waits for the device."""
        if self._truth_of_tensor(expr):
            return True
        finder = _DeviceFinder(self)
        visit(expr, finder)
        return finder.found

    def _truth_of_tensor(self, expr: cst.BaseExpression) -> bool:
        """Whether ``bool()`` is applied to a tensor when ``expr`` is a condition."""
        if isinstance(expr, cst.BooleanOperation):
            return self._truth_of_tensor(expr.left) or self._truth_of_tensor(expr.right)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            return self._truth_of_tensor(expr.expression)
        return self.analysis.kind(expr) is Kind.TENSOR


class _DeviceFinder(cst.CSTVisitor):
    """Whether an expression contains a read of a device value or a device condition."""

    def __init__(self, rule: AsyncAssert) -> None:
        self.rule = rule
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found or isinstance(node, cst.Lambda):
            return False
        analysis = self.rule.analysis
        if isinstance(node, cst.Call) and analysis.host_read(node) is not None:
            self.found = True
        elif isinstance(node, cst.Call) and self.rule.md.qualified_names(node.func) & {
                "torch.equal", "torch.allclose", "torch.is_nonzero"}:
            self.found = True
        return not self.found


#: First words of the names of functions and scripts that check rather than train:
#: ``assert_close``, ``_check_outputs``, ``verify_conversion``, ``check_model.py``.
_CHECK_WORDS = frozenset({"assert", "check", "checks", "verify", "compare", "expect",
                          "sanity", "testing"})
#: Folders of test code (helpers beside the ``test_*.py`` files).
_TEST_FOLDERS = frozenset({"test", "tests", "testing", "unittests"})
#: What a training loop's body calls.
_TRAINING_CALLS = frozenset({"backward", "step", "zero_grad"})


def _is_checker_name(name: str) -> bool:
    return name.lstrip("_").split("_", 1)[0].lower() in _CHECK_WORDS


def _is_checking_file(filename: str) -> bool:
    """A module in a test folder, or a script named as a check (``check_grads.py``,
    ``convert_and_verify.py`` is not: its first word is ``convert``)."""
    parts = filename.replace("\\", "/").split("/")
    if any(part in _TEST_FOLDERS for part in parts[:-1]):
        return True
    stem = parts[-1].removesuffix(".py")
    return stem.endswith("_testing") or _is_checker_name(stem)


def _trains(loop: cst.For | cst.While) -> bool:
    """Whether ``loop``'s body calls ``.backward()``, ``.step()`` or ``.zero_grad()``."""
    class Calls(cst.CSTVisitor):
        found = False

        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in _TRAINING_CALLS:
                self.found = True

    calls = Calls()
    loop.body.visit(calls)
    return calls.found


def _is_string_literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString):
        return "b" not in expr.prefix.lower()
    if isinstance(expr, cst.ConcatenatedString):
        return _is_string_literal(expr.left) and _is_string_literal(expr.right)  # type: ignore
    return False


def _is_simple(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Attribute):
        return _is_simple(expr.value)
    return False
