"""NSY101 branch-to-where."""

from __future__ import annotations

import libcst as cst

from ..prefilter import Signal
from ..rewrite import Rewrite
from ._branches import WHERE, judge_if, judge_if_expression
from .base import Rule


class BranchToWhere(Rule):
    """
    ## What it does
    Finds `if` statements and conditional expressions whose test reads a device value
    (a comparison with a tensor, or with `.item()` / `float()` / `int()` / `bool()` of one;
    `t.any()`, `t.all()`, `torch.isnan(t).any()`; a bare tensor; `and` / `or` / `not` of
    these) when every branch only assigns tensors to plain names, or when both branches
    end by re-registering the same buffer (`self.register_buffer("inv_freq", ...)`) after
    host set-up. Each assigned name becomes one
    `name = torch.where(cond, then_value, else_value)`: a branch that does not
    assign the name keeps its current value, and `elif` chains become nested `torch.where`
    calls. The test keeps its meaning on the device: `loss.item() > 5` becomes `loss > 5`,
    and `and` / `or` / `not` become `&` / `|` / `~`. When several names are assigned, the
    tests are evaluated once, into `cond`, before any of them changes.

    A guard that mixes host facts with a device test, host conjuncts first
    (`if h.dtype == torch.float16 and (torch.isinf(h).any() or torch.isnan(h).any()):`,
    `if self.training and loss > 5:`), keeps the host conjuncts as an `if` and selects the
    device part inside it: the original evaluated the device test only when the host facts
    held, and so does the rewrite. Assignments of host numbers at the top of such a branch
    (`clamp_value = torch.finfo(h.dtype).max - 1000`) stay host code inside the `if`, when
    nothing after the `if` reads them. A dtype test in the guard
    (`h.dtype == torch.float16`) proves `h` a float tensor for the safety checks below.

    A test on a parameter of `forward` (or of a compiled function) whose kind the analysis
    does not know, reduced or transformed with tensor methods (`if h.abs().max() > 1e3:`,
    `if mask.any():`, `total = x.sum()` then `if total > 0:`), is reported without a fix:
    what model code is called with is presumably a tensor, and then the test reads the
    device, but a fix needs it known (annotate the parameter, `h: torch.Tensor`). A bare
    parameter (`if flag:`, `if score > 0:`) is not reported: it is as often a flag or a
    number.

    ## Why is this slow?
    `if` needs a Python `bool`: the host waits until the device has finished all queued
    work (a sync), reads one value, and only then queues more. Under `torch.compile` the
    branch also splits the graph in two. `torch.where` selects on the device: no wait, and
    one graph.

    ## Example
    ```python
    import torch

    x = torch.randn(8)
    for step in range(3):
        if x.abs().max() > 1.0:
            x = x * 0.5
    print(x)
    ```

    ## Use instead
    ```python
    import torch

    x = torch.randn(8)
    for step in range(3):
        x = torch.where(x.abs().max() > 1.0, x * 0.5, x)
    print(x)
    ```

    ## Fix safety
    `torch.where` is not an `if`: it computes both values, broadcasts them against each
    other and the condition, promotes their dtypes, and returns a new tensor through which
    gradients reach every input. The fix is safe only when none of that can show:

    - the test is proven to be a single value (`t.any()`, `t.sum() > 0`, a loss). An `if`
      on a tensor with several elements raises, and `.item()` accepts a one-element tensor
      of any shape; `torch.where` would broadcast either;
    - the test drops no read, or compares it with a threshold exact in every dtype
      (`0`, `10`, `0.5`): `t.item() > 0.1` compares in float64 on the host, `t > 0.1`
      rounds 0.1 to the tensor's dtype;
    - every value is the same tensor changed only by `+`, `-`, `*` with numbers, `abs`,
      `relu`, `clamp` with numbers and the like, so that shape and dtype stay the same
      (a float tensor times 0.5 stays a float tensor; an integer one would not) and the
      untaken value cannot produce inf/NaN or raise;
    - every value depends on the same tensors: `torch.where(c, torch.zeros_like(h), h)`
      still sends (zero) gradients to `h` where the original cut them, and optimizers such
      as Adam then update parameters the original left alone;
    - the name is not updated in place or compared by identity later (it now holds a new
      tensor, not an alias).

    The output of a layer whose weights are floating point (`self.proj(x)` where every
    assignment to `self.proj` is an `nn.Linear`, a convolution, a norm or an `nn.Embedding`
    made without `dtype=`) counts as a float tensor, so `if h.abs().max() > 1e3:
    h = h.clamp(-1e3, 1e3)` after it is safe. NaN does not change that: the test is the same
    tensor expression before and after, so with a NaN in `h` the maximum is NaN, `NaN > 1e3`
    is False on both sides and `h` is kept whole (its infinities too); where the test holds
    the clamp maps infinities to the bounds on both sides, and `torch.where` copies the
    selected bits (-0.0 stays -0.0). Checked bit for bit in float16, bfloat16, float32 and
    float64, eager and compiled, with gradients (`tests/test_forward_forms_compile.py`). A
    module converted to a complex dtype with `.to()` is not seen: clamp raises on complex
    tensors, and the rewrite evaluates it on every call.

    A host number kept in a guarded branch now runs whenever the host facts hold; the fix
    is unsafe when it may raise (`torch.finfo(h.dtype)` of a dtype the guard does not prove
    to be a float one). Clamp bounds that are host names of unknown type count as floats:
    they keep only a float tensor's dtype.

    A predicated update of module state is always unsafe. The test selects which
    tensor `self.register_buffer(...)` gets (or `self.x = ...` assigns): the fix runs
    both branches' set-up and ends with one
    `self.register_buffer("inv_freq", torch.where(cond, a, b), ...)`. What changes:
    the set-up now runs on every call (a lazy `if not hasattr(self, "long_inv_freq"):`
    initialisation happens on the first call, not on the first long one; under
    `torch.compile` dynamo guards on that `hasattr`, so the second call compiles once
    more, as the original does on its first long call); both values are evaluated;
    `torch.where` broadcasts and promotes, so they must have the same shape and dtype;
    and the buffer holds a new tensor where it held `a` or `b` itself (an alias: an
    in-place update of it, or an `is` test, sees the difference). There is no fix when a
    set-up reads a per-call value the test depends on (`init(seq_len=seq_len)` would run
    on the first call's length), prints, draws random numbers, returns or raises, binds a
    name read elsewhere, or when one set-up writes what the other set-up or value reads.
    Writing into the buffer in place (`self.inv_freq.copy_(torch.where(...))`) is never
    offered: `__init__` often stores the same tensor under a second name
    (`self.original_inv_freq = self.inv_freq`), and the copy would overwrite it.

    Otherwise the fix is unsafe and the message names the reason; division, `log`,
    `sqrt`, `pow` ... in a value are the usual one (`0 * inf` makes NaN gradients through the
    untaken value). There is no fix when a value is a Python number, the name may not be
    bound or may hold a Python number before the `if`, the values' dtypes differ (a bool
    mask and a float tensor), the test mixes host and device values (`step > 10 and
    loss > 5` with an `else`, or `loss > 5 and step > 10`, where `and` may skip the
    host part), or the branches depend on each other in ways one
    `torch.where` per name cannot express (NSY102 then offers `torch.cond`). Running
    extremes (`if val.item() < best: best = val.item()`) are NSY203's, and a
    count kept under a device condition in a loop (`if norm > max_norm:
    clipped += 1`) is NSY201's: one finding per `if`.

    There is no fix either when a value copies host data to the device
    (`torch.tensor(self.long_factor, device=x.device)`): `torch.where` would make every
    path's copy on every call, and in eager mode each such copy waits for the device, so
    no wait is saved. Make the tensors once (in `__init__`, as buffers) and select between
    them.

    Eager cost: `torch.where` computes every value on every call and then selects over
    the whole tensor; the `if` computed only the branch it took.
    `benchmarks/where_eager_cost.py` measured each rewrite shape on the CPU, where there
    is no sync to save: 1.1x to 7x more CPU time per call on tensors of 64 and 65,536
    elements (1.14x for one name of 64 elements with the branch taken, 7.2x for an `elif`
    chain over two names). Every finding with a fix says so.

    ## When not to apply
    When the branch is expensive and rarely taken: `torch.where` computes it on every
    call, and in eager mode the rewrite can be slower than the sync it removes. When the
    host needs the decision anyway (to choose what to print or which file to write).
    """

    code = WHERE
    name = "branch-to-where"
    summary = "`if` on a device value that only assigns tensors: select with `torch.where`"
    fix_kind = "safe/unsafe"
    cost = "sync and graph break"
    triggers = ("if",)
    signals = Signal.CONDITION | Signal.READ  # `x.item() is None` is a host test with a read

    def visit_If(self, node: cst.If) -> None:
        verdict = judge_if(self.analysis, node)
        if verdict is not None and verdict.code == self.code:
            self.report(node, _with_eager_cost(verdict.message, verdict.rewrite),
                        verdict.rewrite)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        verdict = judge_if_expression(self.analysis, node)
        if verdict is not None:
            self.report(node, _with_eager_cost(verdict.message, verdict.rewrite),
                        verdict.rewrite)


#: Said on every finding with a fix: ``benchmarks/where_eager_cost.py`` measured every
#: rewrite shape 1.1x to 7x slower per eager call on the CPU (no sync to save there).
EAGER_COST = ("; in eager mode `torch.where` computes every value on every call, so where "
              "no sync is saved (CPU tensors) or the branch is rarely taken, the call can be "
              "several times slower than the `if`")


def _with_eager_cost(message: str, rewrite: Rewrite | None) -> str:
    return message if rewrite is None else message + EAGER_COST
