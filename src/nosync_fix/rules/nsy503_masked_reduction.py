"""NSY503 masked-reduction."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..analysis import Kind, ModuleAnalysis
from ..analysis.base import call_name, positional_args
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._helpers import code_of, method_call, short, torch_ref
from ._scalars import (
    Partner,
    dtype_family,
    is_model_argument,
    is_repeatable,
    partner_cast,
    single_binding_value,
    value_tensor_uses,
)
from .base import Rule

_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "amax", "amin"})
_ELEMENTWISE_PREDICATES = frozenset({
    "isfinite", "isnan", "isinf", "isneginf", "isposinf", "signbit", "logical_not",
})


@dataclass(frozen=True)
class MaskedReduction:
    """``x[mask].sum()`` and friends: a reduction or count over a boolean selection."""

    #: The whole expression: the reduction call, ``len(...)``, ``.size(0)``, ``.item()``...
    node: cst.BaseExpression
    #: "sum", "mean", "max", "min" or "count".
    what: str
    #: The boolean mask.
    mask: cst.BaseExpression
    #: The selected tensor (None for ``mask.nonzero()`` counts).
    tensor: cst.BaseExpression | None
    #: The data-dependent part: ``x[mask]`` or ``mask.nonzero()``.
    selection: cst.BaseExpression
    #: False when ``x`` is only presumed to be a tensor (an argument of ``forward``).
    certain: bool = True
    #: ``x``'s kind is unknown, but the reduction's result is used as a tensor
    #: (``loss = x[keep].mean()``, then ``loss.backward()``): reported without a fix.
    presumed: bool = False


def masked_reduction(analysis: ModuleAnalysis, node: cst.CSTNode) -> MaskedReduction | None:
    """The masked reduction or count that ``node`` is, or None."""
    if isinstance(node, cst.Call):
        method = call_name(node)
        func = node.func
        args = positional_args(node)
        if isinstance(func, cst.Attribute):
            receiver = func.value
            if method in _REDUCTIONS and not node.args:
                what = {"amax": "max", "amin": "min"}.get(method, method)
                selected = _boolean_selection(analysis, receiver)
                if selected is not None:
                    return MaskedReduction(node, what, selected[1], selected[0], receiver,
                                           analysis.kind(selected[0]) is Kind.TENSOR)
                selected = _selection_of_a_tensor_result(analysis, node, receiver)
                if selected is not None:
                    return MaskedReduction(node, what, selected[1], selected[0], receiver,
                                           certain=False, presumed=True)
            if method == "numel" and not node.args:
                selected = _boolean_selection(analysis, receiver)
                if selected is not None and _same_shape(analysis, selected[1], selected[0]):
                    return MaskedReduction(node, "count", selected[1], selected[0], receiver,
                                           analysis.kind(selected[0]) is Kind.TENSOR)
            if method == "size" and len(node.args) == 1 and _is_zero(args[0] if args else None):
                return _count_of(analysis, node, receiver)
            if method == "item" and not node.args and isinstance(receiver, cst.Call) and (
                analysis.md.qualified_names(receiver.func) & {"torch.count_nonzero"}
                and len(receiver.args) == 1 and positional_args(receiver)
            ):
                mask = positional_args(receiver)[0]
                return MaskedReduction(node, "count", mask, None, receiver)
        if analysis.md.qualified_names(func) & {"builtins.len"} and len(node.args) == 1 and (
            args
        ):
            return _count_of(analysis, node, args[0])
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        element = node.slice[0].slice
        value = node.value
        if isinstance(element, cst.Index) and _is_zero(element.value) and isinstance(
            value, cst.Attribute
        ) and value.attr.value == "shape":
            return _count_of(analysis, node, value.value)
    return None


def _count_of(analysis: ModuleAnalysis, node: cst.BaseExpression,
              sized: cst.BaseExpression) -> MaskedReduction | None:
    """``len(sized)`` / ``sized.size(0)`` / ``sized.shape[0]`` when ``sized`` is a selection."""
    selected = _boolean_selection(analysis, sized)
    if selected is not None:
        return MaskedReduction(node, "count", selected[1], selected[0], sized,
                               analysis.kind(selected[0]) is Kind.TENSOR)
    if isinstance(sized, cst.Call) and not sized.args and call_name(sized) == "nonzero" and (
        isinstance(sized.func, cst.Attribute)
        and (analysis.kind(sized.func.value) is Kind.TENSOR
             or dtype_family(analysis, sized.func.value) == "bool")
    ):
        return MaskedReduction(node, "count", sized.func.value, None, sized)
    if isinstance(sized, cst.Call) and analysis.md.qualified_names(sized.func) & {
        "torch.nonzero"
    } and len(sized.args) == 1 and positional_args(sized):
        return MaskedReduction(node, "count", positional_args(sized)[0], None, sized)
    return None


def _boolean_selection(analysis: ModuleAnalysis, expr: cst.BaseExpression,
                       ) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """``(x, mask)`` when ``expr`` is ``x[mask]`` with a boolean tensor ``mask``."""
    if not isinstance(expr, cst.Subscript) or len(expr.slice) != 1:
        return None
    element = expr.slice[0].slice
    if not isinstance(element, cst.Index) or element.star is not None:
        return None
    tensor = expr.value
    if analysis.kind(tensor) is not Kind.TENSOR and not is_model_argument(analysis, tensor):
        return None
    if dtype_family(analysis, element.value) != "bool":
        return None
    return tensor, element.value


def _selection_of_a_tensor_result(analysis: ModuleAnalysis, node: cst.Call,
                                  expr: cst.BaseExpression,
                                  ) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """``(x, mask)`` for ``name = x[mask].mean()`` where ``x``'s kind is unknown (a model's
    output in a training loop) but ``name`` is known to be a tensor (``name.backward()``),
    so ``x`` is one, and ``mask`` is a comparison or other boolean value (issue 18, form d)."""
    assign = analysis.md.parent(node)
    if not (isinstance(assign, cst.Assign) and assign.value is node and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and analysis.kind(assign.targets[0].target) is Kind.TENSOR):
        return None
    if not isinstance(expr, cst.Subscript) or len(expr.slice) != 1:
        return None
    element = expr.slice[0].slice
    if not isinstance(element, cst.Index) or element.star is not None:
        return None
    if analysis.kind(expr.value) is not Kind.UNKNOWN or (
            dtype_family(analysis, element.value) != "bool"):
        return None
    return expr.value, element.value


def _is_zero(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Integer) and expr.evaluated_value == 0


def _same_shape(analysis: ModuleAnalysis, mask: cst.BaseExpression,
                tensor: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether ``mask`` is computed elementwise from ``tensor`` alone (so has its shape)."""
    if depth > 6 or not is_repeatable(tensor):
        return False
    if _same_tensor(analysis, mask, tensor):
        return True  # flags[flags]
    if isinstance(mask, cst.Name):
        value = single_binding_value(analysis, mask)
        return value is not None and _same_shape(analysis, value, tensor, depth + 1)
    if isinstance(mask, cst.Comparison) and len(mask.comparisons) == 1:
        left, right = mask.left, mask.comparisons[0].comparator
        for mine, other in ((left, right), (right, left)):
            if _same_tensor(analysis, mine, tensor) and analysis.kind(other) is Kind.HOST:
                return True
        return False
    if isinstance(mask, cst.UnaryOperation) and isinstance(mask.operator, cst.BitInvert):
        return _same_shape(analysis, mask.expression, tensor, depth + 1)
    if isinstance(mask, cst.BinaryOperation) and isinstance(
        mask.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)
    ):
        return _same_shape(analysis, mask.left, tensor, depth + 1) and _same_shape(
            analysis, mask.right, tensor, depth + 1)
    if isinstance(mask, cst.Call):
        args = positional_args(mask)
        if isinstance(mask.func, cst.Attribute) and not mask.args and (
            mask.func.attr.value in _ELEMENTWISE_PREDICATES
        ):
            return _same_tensor(analysis, mask.func.value, tensor)
        if len(mask.args) == 1 and len(args) == 1 and any(
            q.startswith("torch.") and q.rsplit(".", 1)[-1] in _ELEMENTWISE_PREDICATES
            for q in analysis.md.qualified_names(mask.func)
        ):
            return _same_tensor(analysis, args[0], tensor)
    return False


def _same_tensor(analysis: ModuleAnalysis, a: cst.BaseExpression,
                 b: cst.BaseExpression) -> bool:
    """The same name or attribute chain, bound by the same assignments."""
    if not is_repeatable(a) or code_of(a) != code_of(b):
        return False
    root_a, root_b = a, b
    while isinstance(root_a, cst.Attribute) and isinstance(root_b, cst.Attribute):
        root_a, root_b = root_a.value, root_b.value
    access_a, access_b = analysis.md.access(root_a), analysis.md.access(root_b)  # type: ignore
    if access_a is None or access_b is None:
        return False
    return set(map(id, access_a.referents)) == set(map(id, access_b.referents))


class MaskedReductionRule(Rule):
    """
    ## What it does
    Finds reductions over a boolean selection — `x[mask].sum()`, `x[mask].mean()`,
    `x[mask].max()` — and counts of one — `len(x[mask])`, `x[mask].numel()`,
    `mask.nonzero().size(0)`, `torch.count_nonzero(mask).item()` — and computes
    them with a mask instead: `torch.where(mask, x, 0).sum()`, the masked sum
    divided by `mask.sum()`, `torch.where(mask, x, float("-inf")).max()`, and
    `mask.sum()` for counts that meet tensors in arithmetic.

    In a training loop the selected tensor often comes from code the analysis cannot
    see (`per_tok = model(x, y)`). When the reduction is assigned to a name used as a
    tensor (`loss = per_tok[keep].mean()`, then `loss.backward()`) and the mask is
    boolean, the selected tensor is one too: the selection is reported, without a fix.

    ## Why is this slow?
    `x[mask]` has as many elements as `mask` has `True` values: the host must
    wait for the device to count them before it can even allocate the result
    (a sync, like `.nonzero()`), and `torch.compile` cannot trace a shape it
    does not know (a graph break, "dynamic shape operator"). The masked
    version has a fixed shape.

    ## Example
    ```python
    import torch

    losses = torch.tensor([0.5, -1.0, 2.0, 0.25])
    labels = torch.tensor([1, -100, 2, 3])
    for step in range(2):
        scaled = losses * (step + 1)
        positive = scaled[scaled > 0].sum()
        valid = labels != -100
        mean_valid = scaled[valid].mean()
    print(positive, mean_valid)
    ```

    ## Use instead
    ```python
    import torch

    losses = torch.tensor([0.5, -1.0, 2.0, 0.25])
    labels = torch.tensor([1, -100, 2, 3])
    for step in range(2):
        scaled = losses * (step + 1)
        positive = torch.where(scaled > 0, scaled, 0).sum()
        valid = labels != -100
        mean_valid = torch.where(valid, scaled, 0).sum() / valid.sum()
    print(positive, mean_valid)
    ```

    ## Fix safety
    - **sum** — safe when the mask is computed elementwise from the same tensor
      (`x > 0`, `torch.isfinite(x)`, combined with `&`, `|`, `~`), which gives it
      `x`'s shape. With any other mask it is unsafe: `x[mask]` with a mask of
      fewer dimensions selects whole rows, while `torch.where` broadcasts the
      mask against the last dimensions (wrong numbers when the sizes happen to
      match, an error otherwise), and a CPU mask can index a CUDA tensor but
      `torch.where` needs both on one device. The dtype is kept: `where` with the Python `0`
      keeps `x`'s dtype (bool becomes int64, as `.sum()` of a selection does).
      Floating-point sums may differ in the last bits (the additions happen in
      a different order; the zeros change nothing but the sign of a zero sum).
    - **mean** — unsafe: the masked sum is divided by the count; an empty mask
      gives `nan` as before, but a float16/bfloat16 sum can overflow to `inf`
      where the mean (accumulated in float32) did not.
    - **max/min** — unsafe, and only for floating tensors: the fill is `-inf`
      (`+inf` for min); when the mask selects nothing the original raises, the
      rewrite returns the fill (an empty `x` raises in both).
    - **counts** — `len(x[mask])`, `x[mask].size(0)` and `x[mask].shape[0]` equal
      `mask.sum()` for any boolean mask; `x[mask].numel()` only when the mask has
      `x`'s shape; `.nonzero()` counts become `mask.sum()` too (or
      `torch.count_nonzero(mask)` when the mask is not known to be boolean). They are
      fixed only where the count meets a tensor in arithmetic, and the int64
      count replaces a Python int: exact for division (always a float) and next
      to floating tensors; next to another tensor it is cast to that tensor's
      dtype and device (unsafe when its dtype family is unknown). Elsewhere
      counts are reported without a fix.

    ## When not to apply
    When the selection is small and the full tensor huge (the masked version
    touches every element), or when the selected elements themselves are
    needed, not a reduction of them.
    """

    code = "NSY503"
    name = "masked-reduction"
    summary = "`x[mask].sum()` and counts of a selection: reduce with a mask, no dynamic shape"
    fix_kind = "safe/unsafe"
    cost = "sync and graph break"
    triggers = ("[", "nonzero", "count_nonzero")
    signals = Signal.DATA_DEPENDENT | Signal.READ

    def visit_Call(self, node: cst.Call) -> None:
        self._visit(node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._visit(node)

    def _visit(self, node: cst.BaseExpression) -> None:
        found = masked_reduction(self.analysis, node)
        if found is not None:
            self._check(found)

    def _check(self, found: MaskedReduction) -> None:
        what = short(found.node)
        if found.what != "count":
            message = (f"`{what}` reduces a boolean selection: the host waits for the device "
                       "to count the selected elements; reduce with `torch.where` instead")
        elif isinstance(found.selection, cst.Call) and call_name(found.selection) == (
            "count_nonzero"
        ):
            message = f"`{what}` reads a count on the host: keep it on the device"
        else:
            message = (f"`{what}` counts through `{short(found.selection, 30)}`, whose size "
                       "the host must wait for: count with the mask instead")
        torch, rewrite = torch_ref(self.analysis, Rewrite(
            "Reduce with a mask instead of a data-dependent selection"))
        if found.presumed:
            assert found.tensor is not None
            self.report(found.node, message + f" (no automatic fix: `{short(found.tensor)}` "
                                              "is not known to be a tensor, though the "
                                              "result is used as one)")
            return
        if not found.certain:
            rewrite = rewrite.unsafe()  # x is only presumed to be a tensor
        if found.what == "count":
            self._count(found, message, torch, rewrite)
            return
        assert found.tensor is not None
        effects = self.analysis.effects
        if not (effects.is_pure(found.mask) or effects.is_pure(found.tensor)):
            # x[mask] evaluates x first, torch.where(mask, x, 0) the mask first: with
            # side effects on both sides (random numbers, a model call) the order matters.
            self.report(found.node, message + " (no automatic fix: the tensor and the mask "
                                              "both have side effects, whose order would "
                                              "change)")
            return
        same_shape = _same_shape(self.analysis, found.mask, found.tensor)
        where = f"{torch}.where"
        if found.what in ("max", "min"):
            if dtype_family(self.analysis, found.tensor) != "float":
                self.report(found.node, message + " (no automatic fix: the fill value "
                                                  "needs a floating tensor)")
                return
            fill = cst.parse_expression('float("-inf")' if found.what == "max"
                                        else 'float("inf")')
            new = method_call(_where(where, found.mask, found.tensor, fill), found.what)
            self.report(found.node, message, rewrite.replace(found.node, new).unsafe())
            return
        masked_sum = method_call(_where(where, found.mask, found.tensor, cst.Integer("0")),
                                 "sum")
        if found.what == "sum":
            rewrite = rewrite.replace(found.node, masked_sum)
            self.report(found.node, message, rewrite if same_shape else rewrite.unsafe())
            return
        if not self._repeatable_mask(found.mask):
            self.report(found.node, message + " (no automatic fix: the mask would be "
                                              "computed twice and has side effects)")
            return
        mean = cst.BinaryOperation(masked_sum, cst.Divide(),
                                   method_call(found.mask, "sum"))
        self.report(found.node, message, rewrite.replace(found.node, mean).unsafe())

    def _count(self, found: MaskedReduction, message: str, torch: str,
               rewrite: Rewrite) -> None:
        if dtype_family(self.analysis, found.mask) == "bool":
            count: cst.BaseExpression = method_call(found.mask, "sum")
        else:
            count = cst.Call(cst.parse_expression(f"{torch}.count_nonzero"),
                             [cst.Arg(found.mask)])
        uses = value_tensor_uses(self.analysis, found.node)
        if uses is None:
            self.report(found.node, message + " (no automatic fix: the count is needed as a "
                                              "Python int here)")
            return
        exact = True
        direct = len(uses) == 1 and uses[0][0] is found.node
        cast_tops: set[int] = set()
        for _, partner in uses:
            if id(partner.top) in cast_tops:
                continue
            cast_tops.add(id(partner.top))
            top = partner.top
            if direct:
                top = count if top is found.node else top.deep_replace(found.node, count)
            if self._divides(partner):
                new, use_exact = top, partner.certain
            elif not partner.repeatable:
                self.report(found.node, message + " (no automatic fix: a tensor it meets is "
                                                  "not a plain name, so its dtype cannot be "
                                                  "named)")
                return
            else:
                new, use_exact = partner_cast(self.analysis, top, partner, "int")  # type: ignore
                use_exact = use_exact and partner.certain
            exact = exact and use_exact
            rewrite = rewrite.replace(partner.top, new)
        if not direct:
            rewrite = rewrite.replace(found.node, count)
        self.report(found.node, message, rewrite if exact else rewrite.unsafe())

    def _divides(self, partner: Partner) -> bool:
        """The count itself divides (or is divided by) the tensor: true division gives
        the same dtype for an int64 0-dim tensor as for a Python int."""
        operation = self.md.parent(partner.top)
        return not isinstance(partner.top, (cst.BinaryOperation, cst.UnaryOperation)) and (
            isinstance(operation, cst.BinaryOperation)
            and isinstance(operation.operator, cst.Divide))

    def _repeatable_mask(self, mask: cst.BaseExpression) -> bool:
        return is_repeatable(mask) or self.analysis.effects.is_pure(mask)


def _where(where: str, mask: cst.BaseExpression, tensor: cst.BaseExpression,
           fill: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.parse_expression(where),
                    [cst.Arg(mask), cst.Arg(tensor), cst.Arg(fill)])
