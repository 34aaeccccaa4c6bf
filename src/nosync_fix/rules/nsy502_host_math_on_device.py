"""NSY502 host-math-on-device."""

from __future__ import annotations

import libcst as cst

from ..analysis import Kind, ModuleAnalysis
from ..analysis import _tables as T
from ..analysis.base import positional_args
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._helpers import detached, method_call, short, torch_ref
from ._owners import owner
from ._scalars import (
    HOST_ARITHMETIC,
    is_plain_host,
    is_scalar_shaped,
    partner_cast,
    value_tensor_uses,
)
from .base import Rule


def math_function(analysis: ModuleAnalysis, node: cst.Call) -> str | None:
    """The torch function for a one-argument ``math``/``numpy`` call, or None."""
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
        return None
    for q in analysis.md.qualified_names(node.func):
        library, _, function = q.rpartition(".")
        if library in T.HOST_MATH_LIBRARIES and function in T.HOST_MATH_FUNCTIONS:
            return T.HOST_MATH_FUNCTIONS[function]
    return None


class HostMathOnDevice(Rule):
    """
    ## What it does
    Finds `math.exp(loss.item())`, `math.sqrt(float(var))`, `np.log(t.item())` and
    the like on hot paths: a read of a device value, only to apply a function of
    one number to it. When the result meets tensors in arithmetic (directly, or
    through a variable used only that way) the function runs on the device
    instead: `torch.exp(loss.detach().double())`, cast to the dtype of the
    tensor it meets. Other uses are reported without a fix.

    ## Why is this slow?
    The read waits for the device to finish all queued work, every step, and
    splits a compiled graph; the math itself is trivial on either side. On the
    device there is no wait and the graph stays whole.

    ## Example
    ```python
    import math
    import torch


    class Rescale(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.log_scale = torch.nn.Parameter(torch.tensor(0.5))

        def forward(self, x):
            scale = math.exp(self.log_scale.item())
            return x * scale


    print(Rescale()(torch.tensor([1.0, 2.0, 3.0])))
    ```

    ## Use instead
    ```python
    import torch


    class Rescale(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.log_scale = torch.nn.Parameter(torch.tensor(0.5))

        def forward(self, x):
            scale = torch.exp(self.log_scale.detach().double().reshape(()))
            return x * scale.to(x)


    print(Rescale()(torch.tensor([1.0, 2.0, 3.0])))
    ```

    ## Fix safety
    Always unsafe, for three reasons:

    - Errors become values. `math.log(0.0)` and `math.sqrt(-1.0)` raise
      `ValueError`, `math.exp(1000.0)` raises `OverflowError`; `torch.log` gives
      `-inf`, `torch.sqrt` `nan`, `torch.exp` `inf`, and training goes on with
      them. A call inside `try:` is never fixed.
    - float64 on the device. `math` computes in float64; so does the rewrite
      (`.double()`), which keeps the values (and the overflow range) of the
      original, but Apple's MPS backend has no float64.
    - The result is cast to the dtype and device of the tensor it meets (`.to(x)`), as
      the Python float was; when that tensor's dtype family is unknown and it is
      an integer tensor, the Python float would have promoted to the default
      float dtype instead.

    The tensor is made 0-dim with `.reshape(())` unless it certainly is (a loss,
    a full reduction): a shape `[1]` tensor would broadcast a 0-dim partner.

    ## When not to apply
    When the number is also needed on the host (printed, logged every step,
    compared in an `if`): nosync-fix reports such uses without a fix; compute
    the value on the device and read it where it is needed (once per epoch, or
    through deferred logging). When training relies on the exception to stop.
    """

    code = "NSY502"
    name = "host-math-on-device"
    summary = "`math.exp(t.item())` feeding tensor math: `torch.exp` on the device"
    fix_kind = "unsafe"
    cost = "sync and graph break"
    triggers = ("math", "np.", "numpy")
    signals = Signal.READ

    def visit_Call(self, node: cst.Call) -> None:
        function = math_function(self.analysis, node)
        if function is None:
            return
        argument = positional_args(node)[0]
        found = self._device_leaf(argument)
        if found is None:
            return
        leaf, tensor = found
        if owner(self.analysis, node) is not None:
            return  # a print, a log line, an accumulator... reported by its own rule
        what = short(node)
        message = (f"`{what}` waits for the device to compute one number; compute "
                   f"`torch.{function}` on the device")
        uses = value_tensor_uses(self.analysis, node)
        if uses is None:
            self.report(node, message + " (no automatic fix: the result is not only used "
                                        "in tensor arithmetic)")
            return
        if any(isinstance(a, (cst.Try, cst.TryStar)) for a in self.md.ancestors(node)):
            self.report(node, message + " (no automatic fix: inside `try:`, where the math "
                                        "error may be expected)")
            return
        if not all(partner.repeatable for _, partner in uses):
            self.report(node, message + " (no automatic fix: a tensor it meets is not a "
                                        "plain name, so its dtype cannot be named)")
            return
        torch, rewrite = torch_ref(self.analysis, Rewrite(
            f"Compute `torch.{function}` on the device").unsafe())
        kept = method_call(detached(tensor), "double")
        if not is_scalar_shaped(self.analysis, tensor):
            kept = method_call(kept, "reshape", cst.Tuple([]))
        inner = kept if leaf is argument else argument.deep_replace(leaf, kept)
        on_device = cst.Call(cst.parse_expression(f"{torch}.{function}"),
                             [cst.Arg(inner)])  # type: ignore[arg-type]
        direct = len(uses) == 1 and uses[0][0] is node
        if direct:
            partner = uses[0][1]
            top = on_device if partner.top is node else partner.top.deep_replace(
                node, on_device)
            new, _ = partner_cast(self.analysis, top, partner, "float")  # type: ignore
            rewrite = rewrite.replace(partner.top, new)
        else:
            cast_tops: set[int] = set()
            for _, partner in uses:
                if id(partner.top) not in cast_tops:
                    cast_tops.add(id(partner.top))
                    new, _ = partner_cast(self.analysis, partner.top, partner, "float")
                    rewrite = rewrite.replace(partner.top, new)
            rewrite = rewrite.replace(node, on_device)
        self.report(node, message, self._release_import(node, rewrite))

    def _release_import(self, node: cst.Call, rewrite: Rewrite) -> Rewrite:
        """Let the engine remove ``import math`` (or ``from math import exp``) if now unused."""
        for q in self.md.qualified_names(node.func):
            library, _, function = q.rpartition(".")
            if library in T.HOST_MATH_LIBRARIES:
                if isinstance(node.func, cst.Name):
                    return rewrite.may_leave_unused(library, function)
                return rewrite.may_leave_unused(library)
        return rewrite

    def _device_leaf(self, argument: cst.BaseExpression,
                     ) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        """``(leaf, tensor)``: the read (or tensor) in ``argument`` and the tensor it reads.

        The argument may be host arithmetic around the read, with plain host numbers:
        ``math.sqrt(var.item() + eps)``, ``np.exp(-float(loss))``.
        """
        read = self.analysis.host_read(argument)
        if read is not None:
            return (argument, read.tensor) if read.how in ("item", "float") else None
        if self.analysis.kind(argument) is Kind.TENSOR:
            return argument, argument  # math.exp(t) converts with __float__
        if isinstance(argument, cst.UnaryOperation) and isinstance(argument.operator,
                                                                   (cst.Minus, cst.Plus)):
            return self._device_leaf(argument.expression)
        if isinstance(argument, cst.BinaryOperation) and isinstance(argument.operator,
                                                                    HOST_ARITHMETIC):
            for side, other in ((argument.left, argument.right),
                                (argument.right, argument.left)):
                if self.analysis.kind(other) is Kind.HOST and is_plain_host(other):
                    found = self._device_leaf(side)
                    if found is not None:
                        return found
        return None
