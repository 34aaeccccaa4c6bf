"""NSY103 device-branch-control-flow."""

from __future__ import annotations

import libcst as cst

from ..prefilter import Signal
from ._branches import CONTROL, judge_if
from .base import Rule


class DeviceBranchControlFlow(Rule):
    """
    ## What it does
    Reports `if` statements on a device value whose branch cannot be evaluated on every
    path: it breaks, continues, returns, raises, draws random numbers, updates tensors or
    objects in place, prints or logs, or calls code nosync-fix cannot see. There is no fix;
    the message names the sync-free idiom that fits: for a NaN-step skip
    (`if torch.isnan(loss): optimizer.zero_grad(); continue`), mask the update with
    `torch.where` or keep a found-inf flag on the device as `torch.amp.GradScaler` does;
    for early stopping, check the condition every N steps; for a raise,
    `torch._assert_async`; for an in-place update, `t.copy_(torch.where(cond, new, t))`.

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
