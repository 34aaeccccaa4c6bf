"""NSY103 device-branch-control-flow."""

from __future__ import annotations

import libcst as cst

from ..prefilter import Signal
from ._branches import CONTROL, judge_if
from ._conditions import dtype_class
from ._helpers import short
from .base import Rule


class DeviceBranchControlFlow(Rule):
    """
    ## What it does
    Reports `if` statements on a device value whose branch cannot be evaluated on every
    path: it breaks, continues, returns, raises, draws random numbers, updates tensors or
    objects in place, prints or logs, or calls code nosync-fix cannot see. There is no fix;
    the message names the sync-free idiom that fits: for a NaN-step skip
    (`if torch.isnan(loss): optimizer.zero_grad(); continue`, a branch that skips the
    step or calls `zero_grad`/`step`/`backward`), mask the update with `torch.where` or
    keep a found-inf flag on the device as `torch.amp.GradScaler` does; for early
    stopping, check the condition every N steps; for a raise, `torch._assert_async`; for
    an in-place update, `t.copy_(torch.where(cond, new, t))`. For module state (a branch
    that assigns `self.x` or calls `self.register_buffer`), the message warns that
    `self.buf.copy_(...)` writes through every alias of the buffer: Phi-3's longrope
    rotary embedding sets `self.original_inv_freq = self.inv_freq` in `__init__`, so
    copying the long factors into `inv_freq` would overwrite the short ones. When a host
    test precedes the device test (`if cfg.flag and loss > 5:`), the message adds that
    the host part can stay an `if`.

    ## Why is this slow?
    The `if` makes the host wait for the device every time it runs (a sync), and under
    `torch.compile` it splits the graph. Control flow and side effects cannot be moved to
    the device as they are, so the decision must either be masked or taken less often.

    ## Example
    ```python
    import torch

    losses = [torch.tensor(0.5), torch.tensor(float("inf")), torch.tensor(0.25)]
    total = torch.zeros(())
    for loss in losses:
        if not torch.isfinite(loss):
            continue
        total += loss
    print(total)
    ```

    ## Use instead
    ```python
    import torch

    losses = [torch.tensor(0.5), torch.tensor(float("inf")), torch.tensor(0.25)]
    total = torch.zeros(())
    for loss in losses:
        total += torch.where(torch.isfinite(loss), loss, 0.0)
    print(total)
    ```

    ## Fix safety
    No fix is offered. The branches do things that evaluating them on every path would
    change (random streams shift, objects change, messages print, the loop exits), so a
    rewrite needs a decision only the author can make: what to do on the skipped path.

    ## When not to apply
    When the branch is taken on a host decision anyway (a periodic check, a debug flag), or
    when the loop must stop exactly when the condition first holds. Checking every N steps
    trades N-1 extra steps for N times fewer syncs.
    """

    code = CONTROL
    name = "device-branch-control-flow"
    summary = ("`if` on a device value whose branch breaks, returns, raises or has side "
               "effects: report with the sync-free idiom")
    fix_kind = "none"
    cost = "sync and graph break"
    triggers = ("if",)
    signals = Signal.CONDITION | Signal.READ  # `x.item() is None` is a host test with a read

    def visit_If(self, node: cst.If) -> None:
        verdict = judge_if(self.analysis, node)
        if verdict is not None and verdict.code == self.code:
            self.report(node, verdict.message)

    def visit_Assign(self, node: cst.Assign) -> None:
        """``flag = mask.any().item()`` in traced code, where ``flag`` only decides which code
        runs (``if output_attentions and flag``, ``layer(..., flag=flag)``): Longformer's
        ``is_global_attn``. Report only: both paths are whole code paths."""
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        read = self.analysis.host_read(node.value)
        if read is None or read.how not in ("item", "bool") or not self.analysis.is_hot(node):
            return
        tensor = read.tensor
        any_all = isinstance(tensor, cst.Call) and isinstance(tensor.func, cst.Attribute) and (
            tensor.func.attr.value in ("any", "all"))
        if read.how == "item" and not any_all and dtype_class(self.analysis, tensor) != "bool":
            return
        name = node.targets[0].target
        uses = _flag_uses(self, name)
        if not uses:
            return
        where = ", ".join(f"`{u}`" for u in uses[:2])
        self.report(node, f"`{short(node)}` reads a device value in traced code (a sync, and "
                          "a graph break under torch.compile), and the flag decides which "
                          f"code runs ({where}): no automatic fix. Compute both paths and "
                          "select with torch.where, or pass the flag from the host (computed "
                          "once before the model is called, e.g. from the attention mask "
                          "while it is still on the CPU).")


def _flag_uses(rule: DeviceBranchControlFlow, name: cst.Name) -> list[str]:
    """Where ``name`` is used, when every use is a truth value or a call argument."""
    md = rule.analysis.md
    scope = md.scope(name)
    if scope is None:
        return []
    found: list[str] = []
    # In source order: LibCST keeps the accesses in a set, whose order varies by run (the
    # message named a different second use from one run to the next).
    for access in sorted(scope.accesses[name.value], key=lambda a: md.source_order(a.node)):
        node = access.node
        parent = md.parent(node)
        while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)) and (
            not isinstance(parent, cst.UnaryOperation) or isinstance(parent.operator, cst.Not)
        ):
            node, parent = parent, md.parent(parent)
        if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and node is parent.test:
            found.append(f"{'if' if not isinstance(parent, cst.While) else 'while'} "
                         f"{short(node, 40)}")
        elif isinstance(parent, cst.Arg):
            call = md.parent(parent)
            # A torch function takes the value as a number; a layer or helper takes a flag.
            if not isinstance(call, cst.Call) or any(
                    q.startswith("torch.") for q in md.qualified_names(call.func)):
                return []
            found.append(short(call, 40))
        elif not isinstance(parent, (cst.Assign, cst.AssignTarget)):
            return []
    return found
