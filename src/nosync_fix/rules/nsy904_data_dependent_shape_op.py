"""NSY904 data-dependent-shape-op."""

from __future__ import annotations

import libcst as cst

from ..analysis import Kind
from ..analysis.base import call_name, keyword_arg, positional_args
from ..prefilter import Signal
from ._helpers import short
from ._scalars import dtype_family, is_model_argument
from .base import Rule
from .nsy503_masked_reduction import masked_reduction

_SELECT = ("the mask itself keeps the shape: `torch.where(mask, x, 0)` or `x * mask`, then "
           "reduce")
_INDICES = ("use the mask itself, or `x.nonzero_static(size=K)` padded to a static bound K")
_ADVICE = {
    "nonzero": _INDICES, "argwhere": _INDICES, "where": _INDICES,
    "masked_select": _SELECT, "boolean indexing": _SELECT,
    "unique": "when the values are bounded, count them with `torch.bincount(x, minlength=K)` "
              "or one-hot masks, which have a static shape",
    "unique_consecutive": "when the values are bounded, use fixed-size masks instead",
    "repeat_interleave": "pass `output_size=` with a static bound, or build the result with "
                         "masks",
}
_FUNCTIONS = {
    "torch.nonzero": "nonzero", "torch.argwhere": "argwhere",
    "torch.masked_select": "masked_select", "torch.unique": "unique",
    "torch.unique_consecutive": "unique_consecutive",
    "torch.repeat_interleave": "repeat_interleave",
}
_METHODS = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive",
                      "repeat_interleave"})


class DataDependentShapeOp(Rule):
    """
    ## What it does
    Reports operations whose output shape depends on the values of their input —
    `nonzero`, `argwhere`, `masked_select`, `unique`, boolean indexing `x[mask]`,
    one-argument `torch.where(cond)`, `repeat_interleave` with tensor repeats — in
    `forward` methods and in functions compiled with `torch.compile`.

    Reductions and counts of a boolean selection (`x[mask].sum()`, `len(x[mask])`)
    are NSY503's, which rewrites them; assignments through a mask (`x[mask] = 0`)
    have no dynamic shape and are not reported.

    ## Why is this slow?
    Before it can allocate the output the host must learn its size from the
    device: a sync. `torch.compile` cannot trace an unknown shape ("dynamic shape
    operator") and breaks the graph, unless `capture_dynamic_output_shape_ops` is
    set, and even then the shape is a new symbol for every call.

    ## Example
    ```python
    import torch


    class PositiveEnergy(torch.nn.Module):
        def forward(self, x):
            positive = x[x > 0]
            return positive.pow(2).sum()


    print(PositiveEnergy()(torch.tensor([1.0, -2.0, 3.0])))
    ```

    ## Use instead
    ```python
    import torch


    class PositiveEnergy(torch.nn.Module):
        def forward(self, x):
            positive = torch.where(x > 0, x, 0)
            return positive.pow(2).sum()


    print(PositiveEnergy()(torch.tensor([1.0, -2.0, 3.0])))
    ```

    Keep the shape static: mask instead of selecting (the zeros must be neutral
    for what follows, as they are for a sum of squares), or pad to a static bound
    (`x.nonzero_static(size=K)`, `repeat_interleave(..., output_size=K)`).

    ## Fix safety
    There is no automatic fix: whether a zero (or another fill) is neutral for
    the code that follows is a question about that code.

    ## When not to apply
    When the selected part is much smaller than the whole and the function is
    not compiled, selecting can be faster than computing on every element; the
    sync remains.
    """

    code = "NSY904"
    name = "data-dependent-shape-op"
    summary = "`nonzero`, `unique`, `x[mask]`... in forward or compiled code: keep shapes static"
    fix_kind = "none"
    cost = "sync and graph break"
    triggers = ("nonzero", "argwhere", "masked_select", "unique", "[", "where(",
                "repeat_interleave")
    signals = Signal.DATA_DEPENDENT

    def visit_Call(self, node: cst.Call) -> None:
        op = self._operation(node)
        if op is not None:
            self._found(node, op)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return
        if self.analysis.kind(node.value) is not Kind.TENSOR and not is_model_argument(
            self.analysis, node.value
        ):
            return
        if dtype_family(self.analysis, node.slice[0].slice.value) != "bool":
            return
        if isinstance(self.md.parent(node), cst.AssignTarget):
            return  # x[mask] = value: no new shape
        self._found(node, "boolean indexing")

    def _operation(self, node: cst.Call) -> str | None:
        qnames = self.md.qualified_names(node.func)
        args = positional_args(node)
        if "torch.where" in qnames:
            return "where" if len(node.args) == 1 and len(args) == 1 else None
        for q in qnames:
            if q in _FUNCTIONS:
                op = _FUNCTIONS[q]
                if op == "repeat_interleave" and not self._tensor_repeats(node, args[1:2]):
                    return None
                return op
        func = node.func
        method = call_name(node)
        if isinstance(func, cst.Attribute) and method in _METHODS and (
            self.analysis.kind(func.value) is Kind.TENSOR
            or is_model_argument(self.analysis, func.value)
        ):
            if method == "repeat_interleave" and not self._tensor_repeats(node, args[:1]):
                return None
            return method
        return None

    def _tensor_repeats(self, node: cst.Call, repeats: list[cst.BaseExpression]) -> bool:
        if keyword_arg(node, "output_size") is not None:
            return False
        value = repeats[0] if repeats else keyword_arg(node, "repeats")
        return value is not None and self.analysis.kind(value) is Kind.TENSOR

    def _found(self, node: cst.BaseExpression, op: str) -> None:
        where = self._where(node)
        if where is None or self._owned_by_masked_reduction(node):
            return
        self.report(node, f"`{short(node)}` ({op}) has a shape that depends on the data: "
                          f"a sync, and a graph break {where}; {_ADVICE[op]}")

    def _where(self, node: cst.CSTNode) -> str | None:
        """"in forward" or "in a compiled function", else None."""
        if self.analysis.hot.compiled_function(node) is not None:
            return "in a compiled function"
        function = self.md.enclosing_function(node)
        if function is not None and self.analysis.hot.hot_function_reason(function) == (
            "in forward"
        ):
            return "when forward is compiled"
        return None

    def _owned_by_masked_reduction(self, node: cst.CSTNode) -> bool:
        for depth, ancestor in enumerate(self.md.ancestors(node)):
            if depth > 4:
                return False
            if isinstance(ancestor, (cst.Call, cst.Subscript)):
                found = masked_reduction(self.analysis, ancestor)
                if found is not None and found.selection is node:
                    return True
        return False
