"""NSY905 read-in-compiled-function."""

from __future__ import annotations

import libcst as cst

from ..analysis import HostRead, Kind
from ..analysis.base import call_name
from ..prefilter import Signal
from ._helpers import short
from ._host import host_transfer, is_host_buffer
from ._owners import is_stop_gradient_operand, owner
from ._scalars import tensor_uses
from .base import Rule
from .nsy502_host_math_on_device import math_function
from .nsy503_masked_reduction import masked_reduction
from .nsy902_read_feeds_shape import read_use


class ReadInCompiledFunction(Rule):
    """
    ## What it does
    Reports every scalar read left in a function decorated with `torch.compile`
    or passed to it — `t.item()`, `float(t)`, `int(t)`, `bool(t)`, `t.tolist()`,
    `t.numpy()` — that no other rule reports. It is the catch-all for compiled
    code: `return loss.item()`, `stats = {"loss": float(loss)}`, `ids = t.tolist()`.

    Left to the rules that own them: reads in `if`/`while` tests and conditional
    expressions (NSY101-NSY104), accumulations (NSY201), `append`/`extend`
    (NSY202), `max`/`min` (NSY203), direct operands of tensor arithmetic (NSY204),
    `print`, logging and metric calls (NSY301-NSY303), `assert` (NSY401),
    variables used only in tensor arithmetic (NSY501), `math.*` calls (NSY502),
    counts (NSY503), reads that set a shape, range, slice or index (NSY902) and
    writes into host buffers or transfers in loops (NSY903).

    ## Why is this slow?
    `torch.compile` cannot put a Python number in a graph: it ends the graph at
    the read, runs the read eagerly (a sync), and starts a new graph after it.
    Fusion and memory planning stop at the break, and the host waits for the
    device in the middle of what should be one launch.

    ## Example
    ```python
    import torch


    def step(x):
        loss = (x ** 2).mean()
        return loss.item()


    compiled_step = torch.compile(step, backend="eager")
    print(compiled_step(torch.ones(3)))
    ```

    ## Use instead
    ```python
    import torch


    def step(x):
        loss = (x ** 2).mean()
        return loss


    compiled_step = torch.compile(step, backend="eager")
    print(compiled_step(torch.ones(3)).item())
    ```

    Return tensors from the compiled function and read them outside, where (and
    as rarely as) the host needs them. If a number must be read inside, set
    `torch._dynamo.config.capture_scalar_outputs = True`: the read then stays in
    the graph (still a sync when it runs), as long as nothing branches on it.

    ## Fix safety
    There is no automatic fix: the caller decides where the number is needed.

    ## When not to apply
    In code that runs once per call of something much larger, where a graph
    break costs less than restructuring; and when the function is compiled with
    `fullgraph=False` on purpose around a known break.
    """

    code = "NSY905"
    name = "read-in-compiled-function"
    summary = "A scalar read left in a compiled function breaks the graph: return the tensor"
    fix_kind = "none"
    cost = "sync and graph break"
    triggers = ("compile",)
    signals = Signal.READ  # it reports reads (and `.numpy()`) only

    def visit_Call(self, node: cst.Call) -> None:
        function = self.analysis.hot.compiled_function(node)
        if function is None:
            return
        read = self.analysis.host_read(node)
        numpy = call_name(node) == "numpy" and isinstance(node.func, cst.Attribute) and (
            self.analysis.kind(node.func.value) is Kind.TENSOR)
        if read is None and not numpy:
            return
        if self._owned(node, read):
            return
        self.report(node, f"`{short(node)}` breaks the graph of compiled function "
                          f"`{function.name.value}` (and waits for the device): return the "
                          "tensor and read it outside, or set "
                          "`torch._dynamo.config.capture_scalar_outputs = True`")

    def _owned(self, node: cst.Call, read: HostRead | None) -> bool:
        """Whether another rule reports this read (see the list on the rule's page)."""
        analysis = self.analysis
        if owner(analysis, node) is not None or is_stop_gradient_operand(analysis, node):
            return True
        if masked_reduction(analysis, node) is not None:
            return True
        parent = self.md.parent(node)
        if isinstance(parent, cst.Arg):
            call = self.md.parent(parent)
            if isinstance(call, cst.Call) and math_function(analysis, call) is not None:
                return True
        if read is not None and read_use(analysis, read) is not None:
            return True
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if isinstance(target, cst.Name) and tensor_uses(analysis, target) is not None:
                return True  # NSY501
            if isinstance(target, cst.Subscript) and is_host_buffer(analysis, target.value) and (
                analysis.loops.enclosing_loop(node) is not None
            ):
                return True  # NSY903
        if host_transfer(analysis, node) is not None and (
            analysis.loops.enclosing_loop(node) is not None
        ):
            return True  # NSY903
        return False
