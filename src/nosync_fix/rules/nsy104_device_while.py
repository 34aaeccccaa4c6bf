"""NSY104 device-while."""

from __future__ import annotations

import libcst as cst

from ..prefilter import Signal
from ._branches import header
from ._conditions import device_condition
from .base import Rule


class DeviceWhile(Rule):
    """
    ## What it does
    Reports `while` loops whose condition reads a device value
    (`while (x - y).abs().max() > tol:`, `while not converged:` with a tensor flag). There is
    no fix; the message suggests a bounded loop that masks its updates and checks the
    condition every N iterations, or `torch.while_loop` under `torch.compile`.

    ## Why is this slow?
    The condition is read on the host at every iteration: each one waits for the device to
    finish (a sync), and under `torch.compile` every iteration is a graph break.

    ## Example
    ```python
    import torch

    x = torch.tensor(100.0)
    steps = 0
    while x > 1.0:
        x = x / 2
        steps += 1
    print(x, steps)
    ```

    ## Use instead
    ```python
    import torch

    x = torch.tensor(100.0)
    steps = torch.zeros((), dtype=torch.long)
    for i in range(1000):
        running = x > 1.0
        x = torch.where(running, x / 2, x)
        steps += running
        if i % 16 == 15 and not running:  # read the device every 16 iterations
            break
    steps = int(steps)
    print(x, steps)
    ```

    ## Fix safety
    No fix is offered: the number of iterations is data-dependent, and the rewrite needs a
    bound and a check interval that only the author can choose. Masked iterations after
    convergence must leave the state unchanged, as `torch.where` does above.

    ## When not to apply
    When each iteration is expensive and the loop runs few times, one sync per iteration
    costs little; when the loop runs on the host anyway (data loading, setup).
    """

    code = "NSY104"
    name = "device-while"
    summary = "`while` on a device value: the host waits at every iteration"
    fix_kind = "none"
    cost = "sync and graph break"
    triggers = ("while",)
    signals = Signal.CONDITION | Signal.READ  # `x.item() is None` is a host test with a read

    def visit_While(self, node: cst.While) -> None:
        if device_condition(self.analysis, node.test) is None:
            return
        if self.analysis.hot.is_guarded_by_compile_check(node):
            return
        self.report(node.test, f"`{header(node)}` reads the device at every iteration (a sync, "
                               "and a graph break under torch.compile): no automatic fix. Run a "
                               "bounded loop that checks the condition every N iterations "
                               "(`for i in range(max_iters): ...; if i % N == 0 and not "
                               "<condition>: break`), or express the loop with "
                               "torch.while_loop under torch.compile.")
