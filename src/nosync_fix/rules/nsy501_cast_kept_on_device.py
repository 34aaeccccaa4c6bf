"""NSY501 cast-kept-on-device."""

from __future__ import annotations

import libcst as cst

from ..analysis import HostRead
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._helpers import short
from ._scalars import Partner, kept_read, partner_cast, tensor_uses
from .base import Rule


class CastKeptOnDevice(Rule):
    """
    ## What it does
    Finds a scalar read stored in a variable — `v = float(t)`, `v = int(t)`,
    `v = t.item()` — whose every use is arithmetic with a tensor (`x / v`,
    `(1 - v) * x`, `x.mul_(v)`), and keeps `v` on the device: the read becomes
    `t.detach()`, and each use casts it to the dtype (and device) of the tensor
    it meets, which is what the Python number did.

    ## Why is this slow?
    The read makes the host wait for the device to finish everything queued,
    only to hand the number straight back to the device in the next operation.
    Under `torch.compile` it also splits the graph in two. A 0-dim tensor does
    the same arithmetic without either.

    ## Example
    ```python
    import torch


    class TemperatureScaling(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.log_temperature = torch.nn.Parameter(torch.tensor(0.5))

        def forward(self, logits):
            temperature = self.log_temperature.exp().item()
            return logits / temperature


    scaler = TemperatureScaling()
    print(scaler(torch.tensor([1.0, 2.0, 3.0])))
    ```

    ## Use instead
    ```python
    import torch


    class TemperatureScaling(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.log_temperature = torch.nn.Parameter(torch.tensor(0.5))

        def forward(self, logits):
            temperature = self.log_temperature.exp().detach().reshape(())
            return logits / temperature.to(logits)


    scaler = TemperatureScaling()
    print(scaler(torch.tensor([1.0, 2.0, 3.0])))
    ```

    ## Fix safety
    The rewrite keeps what the Python number did:

    - `.detach()`: the read also cut autograd; without it gradients would flow
      into `t`.
    - `.to(x)` where the value meets a tensor `x`: a Python float never widens a
      tensor's dtype (`x_f32 * 0.1` is float32), a float64 0-dim tensor does
      (`x_f32_0dim * t_f64` is float64); and a Python number goes with a tensor
      on any device, a tensor must be on the other's (a 0-dim CPU tensor is the
      exception). `.to(x)` gives `x`'s dtype and device, and does nothing when
      the value has them already.
    - `.reshape(())` unless `t` is certainly 0-dim (a reduction, a loss): a shape
      `[1]` tensor would turn a 0-dim result into shape `[1]`; like `.item()`,
      `reshape(())` fails on a tensor of several elements.
    - `.trunc()` for `int()` of a floating tensor (`int` truncates towards zero).
    - `.clone()` when `t` may change in place between the read and a use
      (`.detach()` shares storage; `.item()` was a snapshot).

    The fix is safe when the dtype families are known: a float read meeting a
    floating tensor, an int read meeting an integer or floating one. It is
    unsafe when the partner's dtype family is unknown (as for a `forward`
    argument): if `x` held integers, `x * v` with a Python float gives the
    default float dtype, while `x * v.to(x)` first truncates `v` to an
    integer. It is also unsafe for `t.item()` and `int(t)` when `t`'s dtype
    family is unknown.

    Precision: with float16/bfloat16 tensors a Python number enters the kernel in
    float32, the cast tensor in the tensor's own precision; results can differ in
    the last bit. Through host arithmetic (`(1 - v) * x` becomes `(1 - v).to(x) *
    x`), Python computed `1 - v` in float64, the rewrite computes it in `t`'s dtype
    before the cast.

    ## When not to apply
    When `v` is also needed as a Python number (printed, compared in an `if`,
    used as a size), nosync-fix does not report it: those reads are the business
    of the branch, logging and shape rules. Keep the read if `t` lives on the
    CPU anyway and the code is not compiled: then it costs nothing.
    """

    code = "NSY501"
    name = "cast-kept-on-device"
    summary = "`v = float(t)` used only in tensor arithmetic: keep `v` on the device"
    fix_kind = "safe/unsafe"
    cost = "sync and graph break"
    triggers = (".item(", "float(", "int(")
    signals = Signal.READ

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        read = self.analysis.host_read(node.value)
        if read is None or read.how not in ("item", "float", "int"):
            return
        target = node.targets[0].target
        uses = tensor_uses(self.analysis, target)
        if uses is not None:
            self._report(node, target, read, uses)

    def _report(self, node: cst.Assign, target: cst.Name, read: HostRead,
                uses: list[tuple[cst.Name, Partner]]) -> None:
        name = target.value
        message = (f"`{short(node)}` waits for the device, but `{name}` only meets tensors "
                   "in arithmetic: keep it on the device")
        kept = kept_read(self.analysis, read)
        if kept is None:
            self.report(read.node, message + " (no automatic fix: a bool read)")
            return
        if not all(partner.repeatable for _, partner in uses):
            self.report(read.node, message + " (no automatic fix: a tensor it meets is not a "
                                             "plain name, so its dtype cannot be named)")
            return
        rewrite = Rewrite(f"Keep `{name}` on the device as a 0-dim tensor")
        exact = kept.exact and read.certain
        rewrite = rewrite.replace(read.node, kept.expression)
        cast_tops: set[int] = set()
        for _, partner in uses:
            if id(partner.top) in cast_tops:
                continue  # `(v + v) * x`: one cast for both uses
            cast_tops.add(id(partner.top))
            new, use_exact = partner_cast(self.analysis, partner.top, partner, kept.category)
            exact = exact and use_exact and partner.certain
            rewrite = rewrite.replace(partner.top, new)
        if not exact:
            rewrite = rewrite.unsafe()
        self.report(read.node, message, rewrite)

