"""NSY302 deferred-logging."""

from __future__ import annotations

import libcst as cst

from .._percent import conversions as percent_conversions
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._deferred import Plan, Planner, RuntimeNames, logging_method, string_value
from ._helpers import short
from .base import Rule, RuleContext


class DeferredLogging(Rule):
    """
    ## What it does
    Finds logging calls on hot paths — `logging.info(...)` and the other
    levels, and `.debug/.info/.warning/.error/.critical/.exception/.log` on a
    logger made by `logging.getLogger` — whose message or arguments read the
    device (`loss.item()`, an f-string field `{t:.3f}`, a tensor passed for
    `%.4f`), and defers them with `nosync_fix.runtime.deferred_log`: the log
    record is made now, and handed to the handlers later with the numbers
    filled in.

    ## Why is this slow?
    Each read makes the host wait until the device has finished all queued
    work, on every step, just to log a number; under `torch.compile` the read
    also splits the graph. A deferred record costs a small copy on the device;
    pending records are handled in order, every 64 records or once a second,
    after one device-to-host transfer for all of them.

    ## Example
    ```python
    import logging
    import sys

    import torch

    logging.basicConfig(stream=sys.stdout, format="%(levelname)s:%(funcName)s:%(message)s")
    logger = logging.getLogger("train")
    logger.setLevel(logging.INFO)


    def train():
        weights = torch.zeros(2, requires_grad=True)
        for step in range(3):
            loss = ((weights - step) ** 2).sum()
            logger.info("step %d loss %.3f", step, loss.item())


    train()
    ```

    ## Use instead
    ```python
    import logging
    import sys

    import torch
    from nosync_fix.runtime import deferred_log, item

    logging.basicConfig(stream=sys.stdout, format="%(levelname)s:%(funcName)s:%(message)s")
    logger = logging.getLogger("train")
    logger.setLevel(logging.INFO)


    def train():
        weights = torch.zeros(2, requires_grad=True)
        for step in range(3):
            loss = ((weights - step) ** 2).sum()
            deferred_log(logger.info, "step %d loss %.3f", step, item(loss))


    train()
    ```

    ## Fix safety
    Safe: the record is made when the line runs — its time (`%(asctime)s`),
    thread, caller (`%(filename)s`, `%(lineno)d`, `%(funcName)s`), `extra`,
    `exc_info` and `stack_info` are those of the original call, and the level
    is checked then. Only the device values are filled in later, from the
    same Python numbers (`%`-formatting and f-string fields as in NSY301; a
    tensor passed for `%.4f` stays in the call, and logging formats a host
    copy of it).
    The handlers see the records in order, before any ordinary logging call
    and before anything else is written to `sys.stdout`/`sys.stderr`.

    The runtime logs at once (no deferral, same output) when it cannot defer
    exactly: a `LoggerAdapter` or a `Logger` subclass that overrides the
    method, an argument that may change before the flush, and Python < 3.11.

    Not fixed (reported only): calls inside a `torch.compile`d function (the
    record's time and caller cannot be taken there without a graph break),
    tensors logged with `%s` or as the message (`tensor(...)` text), and
    reads used by anything but formatting and arithmetic.

    ## When not to apply
    When a handler's effects are read back by the program right away (a test
    that inspects captured records after each step), or when filters or
    handler levels change between the call and the next flush: call
    `nosync_fix.runtime.flush()` first.
    """

    code = "NSY302"
    name = "deferred-logging"
    summary = "Logging a device value on a hot path: make the record now, fill in the numbers later"
    fix_kind = "safe"
    cost = "sync and graph break"
    triggers = ("logging", "log")
    signals = Signal.OUTPUT

    def __init__(self, context: RuleContext) -> None:
        super().__init__(context)
        self._names: RuntimeNames | None = None

    def visit_Call(self, node: cst.Call) -> None:
        method = self._logging_method(node)
        if method is None:
            return
        if self._names is None:
            self._names = RuntimeNames(self.analysis)
        planner = Planner(self.analysis, self._names)
        positional = [a for a in node.args if a.keyword is None and not a.star]
        level = positional[0] if method == "log" and positional else None
        index = 1 if method == "log" else 0
        message = positional[index] if len(positional) > index else None
        template = string_value(message.value) if message is not None else None
        conversions = percent_conversions(template) if template is not None else None
        plans: list[Plan] = []
        reads_device = False
        blockers: list[str] = []
        position = 0
        for arg in node.args:
            if arg.star or arg.keyword is not None or arg is level:
                plans.append(Plan(arg.value))
                if planner.first_read(arg.value) is not None:
                    reads_device = True
                    blockers.append(f"`{short(arg.value)}` reads the device")
                continue
            if arg is message:
                plan = planner.value(arg.value)
                if not plan.changed and not plan.blocker and planner.device_tensor(arg.value):
                    plan.blocker = (f"the message is the tensor `{short(arg.value)}` "
                                    "(`tensor(...)` text)")
            elif len(positional) == index + 2 and isinstance(arg.value, cst.Dict):
                plan = planner.percent_operand(arg.value, conversions)
            else:
                conversion = conversions.get(position) if conversions is not None else None
                plan = planner.percent_argument(arg.value, conversion)
                position += 1
            reads_device = reads_device or plan.deferred > 0 or plan.blocker is not None
            if plan.blocker:
                blockers.append(plan.blocker)
            plans.append(plan)
        if not reads_device:
            return
        what = f"`{short(node)}` reads the device to log"
        if self.analysis.hot.compiled_function(node) is not None:
            blockers.insert(0, "inside a compiled function the record's time and caller "
                               "cannot be taken without a graph break")
        if blockers:
            self.report(node, f"{what} (no automatic fix: {blockers[0]})")
            return
        args = [a.with_changes(value=p.node) for a, p in zip(node.args, plans, strict=True)]
        first = cst.Arg(node.func, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        new = node.with_changes(func=planner.names.ref("deferred_log"), args=[first, *args])
        names = set().union(*(p.names for p in plans)) | {"deferred_log"}
        rewrite = Rewrite("Defer the log record: made now, handled later with the same text")
        rewrite = planner.names.imports(rewrite.replace(node, new), names)
        self.report(node, f"{what}; defer it: the same record, handled later", rewrite)

    def _logging_method(self, call: cst.Call) -> str | None:
        return logging_method(self.analysis, call)
