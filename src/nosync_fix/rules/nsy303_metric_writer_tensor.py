"""NSY303 metric-writer-tensor."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
from libcst.metadata.scope_provider import Assignment

from ..analysis import _tables as T
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._deferred import Plan, Planner, RuntimeNames
from ._helpers import short
from .base import Rule, RuleContext

#: The argument of each writer method that the writer turns into numbers itself.
_SCALARS_ARGUMENT = {"add_scalar": "scalar_value", "add_scalars": "tag_scalar_dict"}
#: Methods of tqdm bars that take numbers to show.
_BAR_METHODS = frozenset({"set_postfix", "set_postfix_str", "set_description",
                          "set_description_str"})
_LIGHTNING_METHODS = frozenset({"log", "log_dict"})
_LIGHTNING_MODULES = frozenset({"LightningModule"})
_LIBRARY_ROOTS_LIGHTNING = frozenset({"lightning", "pytorch_lightning"})


class MetricWriterTensor(Rule):
    """
    ## What it does
    Finds metric-writer calls on hot paths that are handed `loss.item()` (or
    `float(t)`, `t.tolist()`, an f-string with such a read) and removes the
    wait:

    - Lightning's `self.log(name, t.item())` and `self.log_dict({...})` in a
      `LightningModule`: the tensor is handed over (`self.log(name, t)`);
      Lightning reads it when it logs, not on every step.
    - `writer.add_scalar(tag, t.item(), step)` and `add_scalars` on a
      `SummaryWriter`, and `bar.set_postfix(...)`, `set_postfix_str`,
      `set_description` on a `tqdm` bar: the call is deferred with
      `nosync_fix.runtime.deferred_call` and made at the next flush, with the
      same Python numbers.
    - `writer.add_scalar(tag, loss, step)`: a device tensor handed to
      `add_scalar` (or as a value of `add_scalars`' dict) as it is, which the
      writer turns into a number at once; the call is deferred the same way,
      with `item(loss)`.
    - `wandb.log({...})`, `run.log` and `accelerator.log(...)` are reported
      only (see Fix safety), as is a device tensor handed to a bar as it is
      (`bar.set_postfix(loss=loss)`): the bar formats it with `str()` at once,
      and a deferred call would show the number instead of `tensor(...)`.

    A `SummaryWriter` is an object made by a class of that name (from
    `torch.utils.tensorboard`, `tensorboardX`, or a project's own with the
    same methods); a bar is one made by `tqdm`/`trange` from the tqdm package.

    ## Why is this slow?
    `.item()` makes the host wait until the device has finished all queued
    work, on every step, just to record a number; under `torch.compile` the
    read also splits the graph. Lightning accepts tensors and reads them when
    it logs; a deferred call reads all pending values in one transfer.

    ## Example
    ```python
    import torch


    class SummaryWriter:
        \"\"\"A stand-in for torch.utils.tensorboard.SummaryWriter that prints.\"\"\"

        def add_scalar(self, tag, scalar_value, global_step=None):
            print(f"{tag} {global_step} {scalar_value:.4f}")


    def train(writer: SummaryWriter):
        weights = torch.zeros(2, requires_grad=True)
        for step in range(3):
            loss = ((weights - step) ** 2).sum()
            writer.add_scalar("train/loss", loss.item(), step)


    train(SummaryWriter())
    ```

    ## Use instead
    ```python
    import torch
    from nosync_fix.runtime import deferred_call, item


    class SummaryWriter:
        \"\"\"A stand-in for torch.utils.tensorboard.SummaryWriter that prints.\"\"\"

        def add_scalar(self, tag, scalar_value, global_step=None):
            print(f"{tag} {global_step} {scalar_value:.4f}")


    def train(writer: SummaryWriter):
        weights = torch.zeros(2, requires_grad=True)
        for step in range(3):
            loss = ((weights - step) ** 2).sum()
            deferred_call(writer.add_scalar, "train/loss", item(loss), step)


    train(SummaryWriter())
    ```

    ## Fix safety
    Unsafe in every form; the values recorded are the same, but:

    - Lightning (`self.log`): the value reaches Lightning as a tensor of the
      tensor's own dtype and device instead of a Python float turned into a
      float32 tensor. Under mixed precision a bf16/fp16 loss is logged in that
      dtype; a float64 one keeps its precision.
    - `add_scalar`: the event's wall time is the time of the flush (up to a
      second later) unless `walltime=` is passed, and deferred events may be
      written after events of calls that were not deferred; a writer closed
      before the flush opens a new event file for them.
    - A tensor handed to `add_scalar` as it is: TensorBoard's writer gets
      `loss.item()`, the number it would have made itself, but for two edges.
      A bfloat16 tensor is converted by TensorBoard through float16, which
      rounds it and turns values beyond 65504 into `inf`; `item()` keeps the
      bfloat16 value exactly. A tensor of several elements fails with
      `item()`'s error instead of TensorBoard's. A project's own class named
      `SummaryWriter` gets a Python number instead of the tensor.
    - tqdm: the bar shows the new postfix or description at the flush, not at
      once.
    - `wandb.log` and `accelerator.log` are not fixed: a call made later
      could be overtaken by other calls on the same run, which wandb rejects
      for earlier steps, or land after `wandb.finish()`; and the trackers
      behind `accelerator.log` drop tensors they are handed.

    ## When not to apply
    When the values must be visible at once (watching a slow step live), or
    when other code writes to the same writer or bar and the order of the
    writes matters: call `nosync_fix.runtime.flush()` before it.
    """

    code = "NSY303"
    name = "metric-writer-tensor"
    summary = "Metric writer handed a device read: hand Lightning the tensor, defer the others"
    fix_kind = "unsafe"
    cost = "sync and graph break"
    triggers = (".item(", "float(", "int(", ".tolist(", "log", "add_scalar", "set_postfix",
                "set_description")
    # Every report is of a call handed a read (`t.item()`, `float(t)` ...), a tensor
    # formatted into its text (`bar.set_description(f"loss {loss}")`: OUTPUT), or a
    # tensor a writer or bar reads itself (the pre-filter signals READ there). A tensor
    # handed to Lightning as it is (`self.log(name, t)`) is what the fix makes.
    signals = Signal.READ | Signal.OUTPUT

    def __init__(self, context: RuleContext) -> None:
        super().__init__(context)
        self._names: RuntimeNames | None = None

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method, receiver = func.attr.value, func.value
        if method in _LIGHTNING_METHODS and self._is_lightning_self(receiver):
            self._hand_over(node, method)
        elif method in T.SCALAR_WRITER_METHODS and self._made_by(receiver, self._is_summary_writer):
            self._defer(node, f"`{method}`", _argument(node, 1, _SCALARS_ARGUMENT[method]))
        elif method in _BAR_METHODS and self._made_by(receiver, self._is_tqdm):
            shown = self._shown_tensor(node, method)
            if shown is not None:
                self.report(node, f"`{short(node)}` hands a device tensor (`{short(shown)}`) "
                                  "to the bar, which formats it with `str()` at once: the "
                                  "host waits for the device (no automatic fix: deferred, "
                                  "the bar would show the number, not `tensor(...)`); hand "
                                  f"it a number read less often, or `item({short(shown)})` "
                                  "in a `deferred_call`")
            else:
                self._defer(node, f"the bar's `{method}`")
        elif method == "log" and (self.md.qualified_names(func) & {"wandb.log"}
                                  or self._made_by(receiver, self._is_run_or_accelerator)):
            self._report_only(node)

    # -- the three outcomes ------------------------------------------------------------------

    def _hand_over(self, call: cst.Call, method: str) -> None:
        """Lightning's ``self.log(name, t.item())``: hand over ``t`` itself."""
        value = _argument(call, 1 if method == "log" else 0,
                          "value" if method == "log" else "dictionary")
        if value is None:
            return
        values = ([e.value for e in value.elements if isinstance(e, cst.DictElement)]
                  if isinstance(value, cst.Dict) else [value])
        rewrite = Rewrite("Hand the tensor to Lightning: it reads the value when it logs").unsafe()
        found = False
        for value in values:
            read = self.analysis.host_read(value)
            if read is not None and (read.how == "item" or read.how == "float" and (
                    self.analysis.tensors.dtype_class(read.tensor) == "float")):
                rewrite = rewrite.replace(value, read.tensor.with_changes(
                    lpar=value.lpar, rpar=value.rpar))
                found = True
            elif self._planner().first_read(value) is not None:
                self.report(call, f"`{short(call)}` reads the device to log (no automatic "
                                  f"fix: only a plain `t.item()` is handed over, not "
                                  f"`{short(value)}`)")
                return
        if found:
            when = self.analysis.loops.every_step(call)
            when = "on every step" if when == "every step" else when
            self.report(call, f"`{short(call)}` reads the device {when}; Lightning "
                              "accepts the tensor", rewrite)

    def _defer(self, call: cst.Call, what: str,
               scalars: cst.BaseExpression | None = None) -> None:
        """``writer.add_scalar(tag, t.item(), step)``: the call made at the next flush.

        ``scalars`` is the argument a writer turns into numbers itself (``add_scalar``'s
        value, ``add_scalars``' dict): a device tensor handed there as it is, which the
        writer reads at once, is deferred as ``item(t)``.
        """
        planner = self._planner()
        plans: list[Plan] = []
        handed = 0  # device tensors handed to the writer as they are

        def scalar_value(expr: cst.BaseExpression) -> Plan:
            """As ``planner.value``, and ``item(t)`` for a device tensor ``t`` handed to
            the writer as it is."""
            nonlocal handed
            plan = planner.value(expr)
            if plan.deferred or plan.blocker or not planner.device_tensor(expr):
                return plan
            handed += 1
            return Plan(planner.names.call("item", expr), 1, {"item"})

        for arg in call.args:
            if arg.star:
                plan = Plan(arg.value)
            else:
                plan = self._container_plan(planner, arg.value,
                                            scalar_value if arg.value is scalars else None)
            if arg.star and planner.first_read(arg.value) is not None:
                plan.blocker = "`*` arguments cannot be deferred"
            if plan.blocker:
                self.report(call, f"{what} reads the device (no automatic fix: {plan.blocker})")
                return
            plans.append(plan)
        if not any(p.deferred for p in plans):
            return
        args = [a.with_changes(value=p.node) for a, p in zip(call.args, plans, strict=True)]
        first = cst.Arg(call.func, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        new = call.with_changes(func=planner.names.ref("deferred_call"), args=[first, *args])
        names = set().union(*(p.names for p in plans)) | {"deferred_call"}
        rewrite = Rewrite("Defer the call: made at the next flush with the same values").unsafe()
        rewrite = planner.names.imports(rewrite.replace(call, new), names)
        if handed and handed == sum(p.deferred for p in plans):
            self.report(call, f"`{short(call)}` hands a device tensor to {what}, which reads "
                              "it at once: the host waits for the device; defer the call",
                        rewrite)
        else:
            self.report(call, f"`{short(call)}` reads the device for {what}; defer the call",
                        rewrite)

    def _report_only(self, call: cst.Call) -> None:
        reading = self._planner().first_read(call)
        if reading is not None:
            self.report(call, f"`{short(call)}` reads the device (`{short(reading)}`) on every "
                              "step (no automatic fix: a deferred call could be overtaken by the "
                              "run's other calls, or come after the run ends); log every N "
                              "steps instead")

    # -- helpers -----------------------------------------------------------------------------

    def _planner(self) -> Planner:
        if self._names is None:
            self._names = RuntimeNames(self.analysis)
        return Planner(self.analysis, self._names)

    def _shown_tensor(self, call: cst.Call, method: str) -> cst.BaseExpression | None:
        """A device tensor handed as it is to ``bar.set_postfix``/``set_postfix_str``,
        which turn what is not a number or a string into text with ``str()``."""
        if method not in ("set_postfix", "set_postfix_str"):
            return None
        shown: list[cst.BaseExpression] = []
        for arg in call.args:
            if arg.star or arg.keyword is not None and arg.keyword.value == "refresh":
                continue
            if arg.keyword is None and isinstance(arg.value, cst.Dict):
                shown.extend(e.value for e in arg.value.elements
                             if isinstance(e, cst.DictElement))
            else:
                shown.append(arg.value)
        planner = self._planner()
        return next((value for value in shown if planner.device_tensor(value)), None)

    def _container_plan(self, planner: Planner, expr: cst.BaseExpression,
                        leaf: Callable[[cst.BaseExpression], Plan] | None = None) -> Plan:
        """Like ``planner.value`` (or ``leaf``), and into dict, list and tuple literals (the
        call gets copies)."""
        if isinstance(expr, (cst.Dict, cst.List, cst.Tuple)):
            elements = []
            merged = Plan(expr)
            for element in expr.elements:
                if isinstance(element, (cst.StarredElement, cst.StarredDictElement)):
                    if planner.first_read(element) is not None:
                        return Plan(expr, blocker="starred elements cannot be deferred")
                    elements.append(element)
                    continue
                plan = self._container_plan(planner, element.value, leaf)
                if plan.blocker:
                    return plan
                merged.deferred += plan.deferred
                merged.names |= plan.names
                elements.append(element.with_changes(value=plan.node))
            if merged.changed:
                merged.node = expr.with_changes(elements=elements)
            return merged
        return (leaf or planner.value)(expr)

    def _made_by(self, expr: cst.BaseExpression, is_factory) -> bool:  # type: ignore[no-untyped-def]
        """Whether ``expr`` is only ever an object of a class ``is_factory`` accepts:
        made by calling it, or a parameter annotated with it."""
        classes = self._classes_of(expr)
        return bool(classes) and all(is_factory(self.md.qualified_names(c)) for c in classes)

    def _classes_of(self, expr: cst.BaseExpression) -> list[cst.CSTNode]:
        """The class expressions of everything ``expr`` may hold, or [] when unknown."""
        if isinstance(expr, cst.Call):
            return [expr.func]
        values = self.analysis.tensors.self_attribute_values(expr)
        if values is not None:
            return [v.func if isinstance(v, cst.Call) else cst.Name("_") for v in values]
        access = self.md.access(expr) if isinstance(expr, cst.Name) else None
        classes: list[cst.CSTNode] = []
        for referent in list(access.referents) if access is not None else []:
            node = referent.node if isinstance(referent, Assignment) else None
            if isinstance(node, cst.Param):
                if node.annotation is None:
                    return []
                classes.append(node.annotation.annotation)
                continue
            parent = self.md.parent(node) if isinstance(node, cst.Name) else None
            if isinstance(parent, cst.AssignTarget):
                parent = self.md.parent(parent)
            if isinstance(parent, cst.AsName) and isinstance(self.md.parent(parent),
                                                             cst.WithItem):
                value = self.md.parent(parent).item  # type: ignore[union-attr]
            elif isinstance(parent, (cst.Assign, cst.AnnAssign, cst.NamedExpr)):
                value = parent.value
            else:
                return []
            if not isinstance(value, cst.Call):
                return []
            classes.append(value.func)
        return classes

    @staticmethod
    def _is_summary_writer(qualified: set[str]) -> bool:
        return any(q.rsplit(".", 1)[-1] == "SummaryWriter" for q in qualified)

    @staticmethod
    def _is_tqdm(qualified: set[str]) -> bool:
        return any(q.split(".")[0] == "tqdm" and q.rsplit(".", 1)[-1] in ("tqdm", "trange")
                   for q in qualified)

    @staticmethod
    def _is_run_or_accelerator(qualified: set[str]) -> bool:
        return bool(qualified & {"wandb.init", "accelerate.Accelerator",
                                 "accelerate.accelerator.Accelerator"})

    def _is_lightning_self(self, receiver: cst.BaseExpression) -> bool:
        if not (isinstance(receiver, cst.Name) and receiver.value == "self"):
            return False
        function = self.md.enclosing_function(receiver)
        cls = self.md.enclosing_class(function) if function is not None else None
        return cls is not None and self._is_lightning_class(cls, 0)

    def _is_lightning_class(self, cls: cst.ClassDef, depth: int) -> bool:
        if depth > 5:
            return False
        for base in cls.bases:
            for qualified in self.md.qualified_names(base.value):
                parts = qualified.split(".")
                if parts[0] in _LIBRARY_ROOTS_LIGHTNING and parts[-1] in _LIGHTNING_MODULES:
                    return True
            local = self.analysis.tensors.local_class(base.value)
            if local is not None and local is not cls and self._is_lightning_class(local,
                                                                                   depth + 1):
                return True
        return False


def _argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """The argument at ``position`` or named ``keyword``."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) > position:
        return positional[position].value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    return None
