"""NSY903 host-transfer-in-loop."""

from __future__ import annotations

import libcst as cst

from ..analysis import Kind, ModuleAnalysis, Value
from ..analysis.base import COMPREHENSIONS, call_name, keyword_arg, positional_args
from ..prefilter import Signal
from ._helpers import short
from ._owners import owner
from ._scalars import single_binding_value
from .base import Rule
from .nsy902_read_feeds_shape import read_use

_CPU_FACTORIES = frozenset({
    "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.tensor", "torch.arange",
    "torch.linspace", "torch.logspace", "torch.eye",
})


def host_transfer(analysis: ModuleAnalysis, node: cst.CSTNode) -> str | None:
    """"cpu", "numpy", "tolist" or "to" when ``node`` copies a tensor to the host.

    Only the first transfer of a chain counts: in ``t.cpu().numpy()`` it is ``.cpu()``.
    """
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    method = call_name(node)
    receiver = node.func.value
    if method in ("cpu", "tolist") and not node.args:
        pass
    elif method == "numpy" and not positional_args(node):
        pass
    elif method == "to" and _moves_to_cpu(analysis, node):
        pass
    else:
        return None
    if analysis.kind(receiver) is not Kind.TENSOR or _has_transfer(analysis, receiver):
        return None
    if _made_on_host(analysis, receiver, 0):
        return None  # torch.linspace(...).tolist(): a CPU tensor, nothing to wait for
    return method


#: Methods whose result lives where their receiver does.
_SAME_DEVICE = frozenset({
    "split", "unbind", "chunk", "view", "reshape", "flatten", "float", "double", "long",
    "int", "half", "detach", "clone", "contiguous", "squeeze", "unsqueeze", "t", "round",
})


def _made_on_host(analysis: ModuleAnalysis, expr: cst.BaseExpression, depth: int) -> bool:
    """Whether ``expr`` is certainly a CPU tensor made here: a torch factory without a
    device (or with ``device="cpu"``), and what is cut from it, iterated or converted."""
    if depth > 8:
        return False
    if isinstance(expr, cst.Name):
        value = single_binding_value(analysis, expr)
        if value is None:
            value = _iterated(analysis, expr)
        return value is not None and _made_on_host(analysis, value, depth + 1)
    if isinstance(expr, cst.Subscript):
        return _made_on_host(analysis, expr.value, depth + 1)
    if not isinstance(expr, cst.Call):
        return False
    if analysis.md.qualified_names(expr.func) & _CPU_FACTORIES:
        device = keyword_arg(expr, "device")
        return device is None or _is_cpu(analysis, device)
    if isinstance(expr.func, cst.Attribute) and call_name(expr) in _SAME_DEVICE:
        return _made_on_host(analysis, expr.func.value, depth + 1)
    return False


def _iterated(analysis: ModuleAnalysis, name: cst.Name) -> cst.BaseExpression | None:
    """The iterable of the only ``for`` (or comprehension) that binds ``name``."""
    access = analysis.md.access(name)
    if access is None or access.scope is None:
        return None
    assignments = list(access.scope.assignments[name.value])
    if len(assignments) != 1:
        return None
    holder = analysis.md.parent(assignments[0].node)
    if isinstance(holder, (cst.For, cst.CompFor)) and holder.target is assignments[0].node:
        return holder.iter
    return None


def _moves_to_cpu(analysis: ModuleAnalysis, call: cst.Call) -> bool:
    device = keyword_arg(call, "device")
    candidates = ([device] if device is not None else []) + positional_args(call)[:1]
    return any(_is_cpu(analysis, c) for c in candidates)


def _is_cpu(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value == "cpu"
    if isinstance(expr, cst.Call) and analysis.md.qualified_names(expr.func) & {"torch.device"}:
        args = positional_args(expr)
        return len(args) == 1 and _is_cpu(analysis, args[0])
    return False


def _has_transfer(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is already on the host: a transfer in its chain, or a name bound
    once to one (``image = t.cpu()``, then ``image.numpy()``)."""
    while True:
        if isinstance(expr, cst.Name):
            value = single_binding_value(analysis, expr)
            if value is None:
                return False
            expr = value
        elif isinstance(expr, cst.Call):
            if host_transfer(analysis, expr) is not None:
                return True
            if not isinstance(expr.func, cst.Attribute):
                return False
            expr = expr.func.value
        elif isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        else:
            return False


def is_host_buffer(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """A CPU tensor or a numpy array: ``torch.zeros(n)`` without a device, ``x.cpu()``,
    ``np.zeros(n)``, bound once to a name."""
    if not isinstance(expr, cst.Name):
        return False
    if analysis.tensors.value(expr) is Value.ARRAY:
        return True
    value = single_binding_value(analysis, expr)
    if not isinstance(value, cst.Call):
        return False
    if call_name(value) == "cpu" or (call_name(value) == "to" and _moves_to_cpu(analysis,
                                                                              value)):
        return True
    return _made_on_host(analysis, value, 0)


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
        self.report(node, f"`{short(node)}` copies to the host and waits for the device on "
                          "every iteration: keep the values on the device (stack or "
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
        if not self._in_loop(node):
            return
        self.report(node, f"`{short(node)}` copies a device value into a host buffer and "
                          "waits for the device on every iteration: fill a tensor on the "
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
