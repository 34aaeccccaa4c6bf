"""NSY301 deferred-print."""

from __future__ import annotations

import libcst as cst

from ..prefilter import Signal
from ..rewrite import Rewrite
from ._deferred import Plan, Planner, RuntimeNames, logging_method
from ._helpers import short
from ._host import is_host_buffer
from .base import Rule, RuleContext

_STANDARD_STREAMS = frozenset({"sys.stdout", "sys.stderr"})
_REDIRECTS = frozenset({"contextlib.redirect_stdout", "contextlib.redirect_stderr"})


class DeferredPrint(Rule):
    """
    ## What it does
    Finds `print(...)` calls on hot paths whose arguments read the device —
    `loss.item()`, `float(t)`, `t.tolist()`, a tensor formatted as a number
    (`f"{t:.3f}"`) — inside f-strings, `str.format`, `%` formatting or
    arithmetic, and defers them: the line is recorded with a snapshot of the
    tensors taken on the device and printed later, byte for byte the same,
    by `nosync_fix.runtime`.

    ## Why is this slow?
    Each read makes the host wait until the device has finished all queued
    work, on every step, just to print a number; under `torch.compile`, `print`
    and `.item()` also split the graph. A deferred line costs a small copy on
    the device. Pending lines are written in order, every 64 lines or once a
    second, with one device-to-host transfer for all of them.

    ## Example
    ```python
    import torch

    weights = torch.zeros(3, requires_grad=True)
    for step in range(3):
        loss = ((weights - step) ** 2).sum()
        loss.backward()
        print(f"step {step} loss {loss.item():.4f} ({loss.item() * 100:.1f}%)")
    ```

    ## Use instead
    ```python
    import torch
    from nosync_fix.runtime import deferred_print, fmt, item

    weights = torch.zeros(3, requires_grad=True)
    for step in range(3):
        loss = ((weights - step) ** 2).sum()
        loss.backward()
        deferred_print(
            fmt("step {} loss {:.4f} ({:.1f}%)", step, item(loss), item(loss) * 100)
        )
    ```

    ## Fix safety
    Safe: the text, the separators and the stream are the same. Numbers are
    formatted from the same Python values (`item(loss)` is `loss.item()` of a
    copy taken when the line ran; arithmetic on it is Python's own, at flush
    time; a tensor given to `%.4f` is `float()`-ed at flush time, as `%`
    would). Other values in the line are captured when it runs. Anything the
    runtime cannot defer exactly — a tensor subclass, a value that may change
    before the flush — is formatted at once, as the original did. torch's
    warning for `float()` of a tensor that requires grad is given when the
    line runs, as before.

    A line whose formatting raises (`{loss.item():d}` of a float, a division
    by zero in `{a.item() / b:.2f}`) raises at the flush instead of at the
    `print`: the program fails either way, at another place.

    Lines are written later, but never out of order: the runtime writes
    pending lines before anything else is written to `sys.stdout` or
    `sys.stderr`, before any logging call, before a traceback and at exit.

    Not fixed (reported only): `print(t)` of a tensor (its `tensor(...)` text
    names the device and the autograd node, which a host copy does not have),
    prints to other file objects (they may be closed or written directly
    before the flush), `f"{x=}"` fields, and reads used by anything but
    formatting and arithmetic (`math.exp(loss.item())`). While another stream
    stands in for `sys.stdout` or `sys.stderr` (`contextlib.redirect_stdout`,
    pytest's `capsys`), the runtime writes each line at once, so that the
    caller finds it in the capture: there the fix saves nothing, and inside a
    visible `contextlib.redirect_stdout` block it is marked unsafe.

    Also reported without a fix: a print whose host has already waited, so that
    deferring it saves nothing — inside an `if`/`while` whose test read the device,
    or right after a line that is one call reading the device with no fix of its own
    (`tracker.info("%.4f", loss.item())` then `print(f"{loss.item():.4f}")`). Prints
    and standard-logging calls before it do not count (they are deferred too), nor do
    other statements (`total += loss.item()` may be fixed by NSY201).

    ## When not to apply
    When the program reads its own output back before a flush by other means
    than a redirection (the file that stdout points to), or when a line must
    appear at once (progress on a hung job): call `nosync_fix.runtime.flush()`
    there, or set `NOSYNC_IMMEDIATE=1` while debugging.
    """

    code = "NSY301"
    name = "deferred-print"
    summary = "`print` of a device value on a hot path: record it and print it later, unchanged"
    fix_kind = "safe"
    cost = "sync and graph break"
    triggers = ("print(",)
    signals = Signal.OUTPUT

    def __init__(self, context: RuleContext) -> None:
        super().__init__(context)
        self._names: RuntimeNames | None = None

    @property
    def planner(self) -> Planner:
        if self._names is None:
            self._names = RuntimeNames(self.analysis)
        return Planner(self.analysis, self._names)

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Name)
                and "builtins.print" in self.md.qualified_names(node.func)):
            return
        planner = self.planner
        plans: list[Plan] = []
        reads_device = False  # something in the call reads the device
        blockers: list[str] = []
        for arg in node.args:
            if arg.star or arg.keyword is not None:
                plans.append(Plan(arg.value))
                if planner.first_read(arg.value) is not None:
                    reads_device = True
                    blockers.append(f"`{short(arg.value)}` reads the device")
                elif arg.keyword is not None and arg.keyword.value == "file" and (
                        not self._standard_stream(arg.value)):
                    blockers.append("it writes to a file object, which may be written to or "
                                    "closed before a deferred line reaches it")
                continue
            plan = planner.value(arg.value)
            if (not plan.changed and not plan.blocker and planner.device_tensor(arg.value)
                    and not is_host_buffer(self.analysis, arg.value)):  # y = x.cpu(); print(y)
                plan.blocker = (f"it prints the tensor `{short(arg.value)}` as `tensor(...)`, "
                                "with device and autograd details; print a number instead")
            reads_device = reads_device or plan.deferred > 0 or plan.blocker is not None
            if plan.blocker:
                blockers.append(plan.blocker)
            plans.append(plan)
        if not reads_device:
            return
        what = f"`{short(node)}` reads the device to print"
        if not blockers and self._inside_device_branch(node, planner):
            blockers.append("the condition around it has already read the device, so deferring "
                            "the line saves no wait and only prints it late")
        if not blockers:
            before = self._read_just_before(node, planner)
            if before is not None:
                blockers.append(f"the line before already reads the device (`{short(before)}`), "
                                "so the host has waited already and deferring the print saves "
                                "no wait")
        if blockers:
            self.report(node, f"{what} (no automatic fix: {blockers[0]})")
            return
        rewrite = Rewrite("Defer the line: record a device snapshot, print the same text later")
        if self._inside_redirect(node):
            rewrite = rewrite.unsafe()
        args = [a.with_changes(value=p.node) for a, p in zip(node.args, plans, strict=True)]
        new = node.with_changes(func=planner.names.ref("deferred_print"), args=args)
        names = set().union(*(p.names for p in plans)) | {"deferred_print"}
        rewrite = planner.names.imports(rewrite.replace(node, new), names)
        self.report(node, f"{what}; defer it: the same text, printed later", rewrite)

    def _standard_stream(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Name) and value.value == "None":
            return True
        return bool(self.md.qualified_names(value) & _STANDARD_STREAMS)

    def _inside_device_branch(self, node: cst.CSTNode, planner: Planner) -> bool:
        """An enclosing `if`/`while` in the same function whose test reads the device."""
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(ancestor, (cst.If, cst.While)) and (
                    planner.first_read(ancestor.test) is not None
                    or planner.device_tensor(ancestor.test)):  # `if t > 0:` reads it too
                return True
        return False

    def _read_just_before(self, node: cst.CSTNode, planner: Planner) -> cst.Call | None:
        """A device read that stays in the statement just before the print's.

        ``logger.info("%.4f", loss.item())`` (a logger nosync-fix cannot defer) then
        ``print(f"{loss.item():.4f}")``: the host has waited already, so the print's reads
        wait for nothing (issue 20, diffusers' LLaDA2 training script). Only a statement
        that is one call to something other than ``print`` or a standard logger counts:
        those two are deferred too (by this rule and NSY302), and other reads (`total +=
        loss.item()`, `x = t.item()`) may be removed by other fixes. Prints between are
        passed over.
        """
        statement = self.md.statement_of(node)
        block = self.md.parent(statement) if statement is not None else None
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            return None
        body = list(block.body)
        index = next((i for i, item in enumerate(body) if item is statement), 0) - 1
        while index >= 0 and self._call_line(body[index]) is not None and (
                self._is_print(self._call_line(body[index]))):  # type: ignore[arg-type]
            index -= 1
        call = self._call_line(body[index]) if index >= 0 else None
        if call is None or logging_method(self.analysis, call) is not None:
            return None
        return planner.first_read(call)

    @staticmethod
    def _call_line(statement: cst.CSTNode) -> cst.Call | None:
        """The call of a line that is one call expression and nothing else."""
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None
        expr = statement.body[0]
        return expr.value if isinstance(expr, cst.Expr) and isinstance(expr.value,
                                                                       cst.Call) else None

    def _is_print(self, call: cst.Call) -> bool:
        return isinstance(call.func, cst.Name) and "builtins.print" in (
            self.md.qualified_names(call.func))

    def _inside_redirect(self, node: cst.CSTNode) -> bool:
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, cst.With) and any(
                isinstance(item.item, cst.Call)
                and self.md.qualified_names(item.item.func) & _REDIRECTS
                for item in ancestor.items
            ):
                return True
        return False
