"""NSY903 host-transfer-in-loop."""

from __future__ import annotations

import libcst as cst

from ..analysis import Kind
from ..analysis.base import COMPREHENSIONS
from ..prefilter import Signal
from ._helpers import short
from ._host import certainly_on_host, host_transfer, is_host_buffer
from ._owners import owner
from .base import Rule
from .nsy902_read_feeds_shape import read_use


class HostTransferInLoop(Rule):
    """
    ## What it does
    Reports copies of tensors to the host inside loops — `.cpu()`, `.numpy()`,
    `.tolist()`, `.to("cpu")` — and the hidden one: writing a tensor into an
    element of a CPU tensor or a numpy array (`cpu_losses[step] = loss`), which
    copies it to the host too. No fix: collect on the device and copy once.

    Transfers that other rules handle are left to them: `lst.append(t.cpu())` and
    `lst.extend(t.tolist())` (NSY202), transfers inside `print`, logging and
    metric calls (NSY301-NSY303), `.tolist()` feeding a shape (NSY902).

    ## Why is this slow?
    A copy to the host must wait until the device has computed the tensor: every
    iteration the host stops and the device then idles while Python catches up.
    Copies of small tensors cost far more in waiting than in bytes.

    ## Example
    ```python
    import torch

    history = torch.zeros(4)
    for step in range(4):
        loss = torch.tensor(0.5) * step
        history[step] = loss
    print(history.tolist())
    ```

    ## Use instead
    ```python
    import torch

    losses = []
    for step in range(4):
        loss = torch.tensor(0.5) * step
        losses.append(loss.detach())
    history = torch.stack(losses).cpu()
    print(history.tolist())
    ```

    Keep the values on the device (a list of detached tensors, or a tensor
    allocated with `device=loss.device`) and copy them to the host once, after
    the loop.

    ## Fix safety
    There is no automatic fix: the code after the loop decides what the host
    needs, and in what form.

    ## When not to apply
    When the loop runs on the CPU anyway, when each step really needs the values
    on the host (a data-dependent Python decision), or when the copied data is
    large and memory on the device is short: then copy asynchronously
    (`.to("cpu", non_blocking=True)` into pinned memory) and synchronize once.
    """

    code = "NSY903"
    name = "host-transfer-in-loop"
    summary = "`.cpu()`, `.numpy()`, `.tolist()` or a CPU element write in a loop: copy once"
    fix_kind = "none"
    cost = "sync"
    triggers = (".cpu(", ".numpy(", ".tolist(", ".to(", "]")  # "]": buffer[k] = t
    signals = Signal.READ | Signal.STORE

    def visit_Call(self, node: cst.Call) -> None:
        method = host_transfer(self.analysis, node)
        if method is None or not self._in_loop(node):
            return
        if owner(self.analysis, node) is not None or self._feeds_shape(node):
            return
        when = "whenever it runs (every N steps)" if self.analysis.loops.periodic(node) \
            else "on every iteration"
        self.report(node, f"`{short(node)}` copies to the host and waits for the device "
                          f"{when}: keep the values on the device (stack or "
                          "concatenate them) and copy once after the loop")

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._element_write(node, target.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._element_write(node, node.target, node.value)

    def _element_write(self, node: cst.CSTNode, target: cst.BaseExpression,
                       value: cst.BaseExpression) -> None:
        if not isinstance(target, cst.Subscript) or not is_host_buffer(self.analysis,
                                                                        target.value):
            return
        if self.analysis.kind(value) is not Kind.TENSOR and not self._reads_scalar(value):
            return
        read = self.analysis.host_read(value)
        if certainly_on_host(self.analysis, value if read is None else read.tensor):
            return  # a CPU tensor into a CPU buffer: no device to wait for
        if not self._in_loop(node):
            return
        when = "whenever it runs (every N steps)" if self.analysis.loops.periodic(node) \
            else "on every iteration"
        self.report(node, f"`{short(node)}` copies a device value into a host buffer and "
                          f"waits for the device {when}: fill a tensor on the "
                          "device (`device=...`) or stack the values, and copy once after the "
                          "loop")

    def _reads_scalar(self, value: cst.BaseExpression) -> bool:
        """``t.item()``, ``float(t)``...: for a report, ``.item()`` of anything that is not
        certainly a host value counts (``losses[k] = loss.item()`` with ``loss`` unknown)."""
        read = self.analysis.host_read(value)
        if read is not None:
            return read.how != "tolist"
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and (
            value.func.attr.value == "item" and not value.args
            and self.analysis.kind(value.func.value) is not Kind.HOST)

    def _in_loop(self, node: cst.CSTNode) -> bool:
        if self.analysis.loops.enclosing_loop(node) is not None:
            return True
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, COMPREHENSIONS):
                return True
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return False
        return False

    def _feeds_shape(self, node: cst.Call) -> bool:
        read = self.analysis.host_read(node)
        return read is not None and read_use(self.analysis, read) is not None
