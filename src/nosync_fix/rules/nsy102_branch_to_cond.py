"""NSY102 branch-to-cond."""

from __future__ import annotations

import libcst as cst

from ..prefilter import Signal
from ._branches import COND, judge_if
from .base import Rule


class BranchToCond(Rule):
    """
    ## What it does
    Finds `if` statements on a device value whose branches return tensors
    (`if h.abs().max() > limit: return h / h.abs().max()` / `return h`), or compute several
    pure statements that one `torch.where` per name cannot express (a temporary, a name
    computed from another the branch also assigns, a nested host `if`). The branches
    become two local functions over the tensors they read, and the `if` becomes
    `torch.cond(pred, _then, _else, (operands,))`, assigned to the names used afterwards
    (or returned). Host values such as configuration are reached by closure; an operand
    a branch passes through unchanged is returned as `.clone()`, since torch.cond rejects
    outputs that alias its inputs.

    The fix is offered only in code the file compiles on every path: a function decorated
    with or passed to `torch.compile`, or the `forward` of a module class every instance of
    which the file passes to `torch.compile` (or `.compile()`s), where it makes it or in
    module-level code, outside any `if`, loop or `try` (`if __name__ == "__main__":`
    aside). One eager instance (torchtune's `SymmetricKLLoss` keeps a plain
    `ForwardKLLoss`), or a compile that may not run (in an optional method such as
    `apply_compile_strategy`, under `if cfg.compile:`), leaves the branch without a fix:
    in eager mode `torch.cond` traces its branches on every call, and a forward and
    backward pass of torchtune's KL distillation loss went from 0.23 ms to 72 ms on a
    CPU; building the branches once does not help (`benchmarks/cond_eager_cost.py`).

    ## Why is this slow?
    `if` on a device value makes the host wait for the device and splits a compiled graph
    in two. `torch.cond` keeps both branches in one graph and runs only the one taken.

    ## Example
    ```python
    import torch


    def clip(x: torch.Tensor, max_norm: float):
        norm = x.norm()
        if norm > max_norm:
            scale = max_norm / norm
            x = x * scale
        return x


    compiled_clip = torch.compile(clip)  # what the training loop calls
    y = clip(torch.tensor([3.0, 4.0]), 1.0)
    print(y)
    ```

    ## Use instead
    ```python
    import torch


    def clip(x: torch.Tensor, max_norm: float):
        norm = x.norm()
        def _then(norm, x):
            scale = max_norm / norm
            x = x * scale
            return x
        def _else(norm, x):
            return x.clone()
        x = torch.cond(norm > max_norm, _then, _else, (norm, x))
        return x


    compiled_clip = torch.compile(clip)  # what the training loop calls
    y = clip(torch.tensor([3.0, 4.0]), 1.0)
    print(y)
    ```

    ## Fix safety
    Always unsafe. `torch.cond` removes the graph break, but Inductor still reads the
    predicate on the host (one sync per call). A call of the function that does not go
    through `torch.compile` runs `torch.cond` eagerly, which traces the branches with Dynamo
    every time: hundreds of times slower than the `if` (see above). Both branches must
    return the same structure, shapes and dtypes, and may not mutate their inputs or return
    views of them: where the original got away with different shapes on the two paths,
    `torch.cond` raises. The operands are evaluated before the call (a name a branch reads
    must be bound before the `if`), and every output is a new tensor. Host values the
    branches read (`max_norm` above) are reached by closure: under `torch.compile` they must
    not change between calls, since torch.cond cannot take a Python float that Dynamo has
    made dynamic (the message names them). Dropping `.item()` from the predicate has the
    same edges as in NSY101 (thresholds rounded to the tensor's dtype).

    Autograd: the output of `torch.cond` is differentiable with respect to the operands
    of both branches. Where one branch returns a constant (`return torch.tensor(0.0)`,
    a zero loss when every label is ignored) and the other depends on inputs that
    require grad, the original returned a tensor without `requires_grad` on that path,
    and `backward()` on it raised; the rewrite returns one that requires grad and sends
    zero gradients back, so `backward()` succeeds and parameters get zero gradients
    (an optimizer with weight decay or momentum then updates them).

    There is no fix for `elif` chains, for branches that return different numbers of
    values or non-tensors, or that assign names used afterwards that are not tensors or are
    not bound on every path.

    ## When not to apply
    When the branches are cheap and pure, NSY101's `torch.where` has no sync at all. When
    the function is also called without `torch.compile` (the compiled wrapper is only
    used for training, the plain function for evaluation): in eager mode `torch.cond`
    still synchronizes and traces its branches on every call.
    """

    code = COND
    name = "branch-to-cond"
    summary = "`if` on a device value that returns or computes tensors: use `torch.cond`"
    fix_kind = "unsafe"
    cost = "sync and graph break"
    triggers = ("if",)
    signals = Signal.CONDITION | Signal.READ  # `x.item() is None` is a host test with a read

    def visit_If(self, node: cst.If) -> None:
        verdict = judge_if(self.analysis, node)
        if verdict is not None and verdict.code == self.code:
            self.report(node, verdict.message, verdict.rewrite)
