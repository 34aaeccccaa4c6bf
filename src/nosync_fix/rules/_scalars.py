"""Keeping a scalar on the device: what a tensor can stand in for a Python number, and where.

A Python number met by a tensor in arithmetic is a *wrapped number*: it never
changes the result's dtype within its category (``x_f32 * 0.1`` is float32,
``x_i64 * 0.5`` is the default float dtype). A 0-dim device tensor does:
``x_f32_0dim * t_f64`` is float64, and a tensor of shape ``[1]`` broadcasts a
0-dim partner to ``[1]``. The rules that keep a read on the device (NSY501,
NSY502, NSY503) use the helpers here to make the tensor behave like the number
it replaces:

* :func:`tensor_partner` finds, for one use of a value, the tensor it meets in
  arithmetic (through host arithmetic such as ``(1 - v) * x``);
* :func:`partner_cast` casts the kept tensor to that partner's dtype (and device),
  which the Python number would not have widened;
* :func:`is_scalar_shaped` says when a tensor is certainly 0-dim (else the kept
  value gets ``.reshape(())``, which, like ``.item()``, fails for several elements);
* :func:`may_be_mutated` says when a name may change in place after the read
  (else ``.detach()``, which shares storage, is not a snapshot and needs ``.clone()``).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..analysis import HostRead, Kind, ModuleAnalysis
from ..analysis import _tables as T
from ..analysis.base import assignment_of, call_name, keyword_arg, positional_args
from ._helpers import detached, method_call

#: Operators under which a tensor behaves like the Python number it replaces.
TENSOR_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide,
                     cst.Modulo, cst.Power)
#: Operators allowed between the value and host numbers on its way to a tensor.
#: ``**`` is left out: Python gives a complex number for ``(-8.0) ** (1 / 3)``.
HOST_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide,
                   cst.Modulo)
#: Tensor methods taking the other operand as their only argument: ``x.mul_(v)``.
OPERAND_METHODS = frozenset({"mul", "mul_", "div", "div_", "add", "add_", "sub", "sub_"})
OPERAND_FUNCTIONS = frozenset({"torch.mul", "torch.div", "torch.add", "torch.sub"})

#: Methods that reduce a whole tensor to a 0-dim one when called without arguments.
_FULL_REDUCTIONS = frozenset({
    "sum", "mean", "prod", "max", "min", "amax", "amin", "norm", "std", "var", "all", "any",
    "median", "nansum", "nanmean", "count_nonzero",
})
#: Elementwise methods: the result has the receiver's shape (and is a new tensor).
_ELEMENTWISE = frozenset({
    "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "abs", "neg",
    "sigmoid", "tanh", "sin", "cos", "reciprocal", "square", "relu", "sign", "floor", "ceil",
    "round", "trunc", "clone", "exp2", "erf",
})
#: Conversions and views: same shape, but possibly the very same storage.
_SAME_SHAPE_ALIASING = frozenset({
    "detach", "float", "double", "half", "bfloat16", "long", "int", "to", "contiguous",
})
#: Methods whose result has the receiver's dtype.
_SAME_FAMILY = frozenset({
    "detach", "clone", "abs", "neg", "max", "min", "amax", "amin", "squeeze", "unsqueeze",
    "view", "reshape", "flatten", "contiguous", "t", "transpose", "permute", "expand",
    "repeat", "flip", "roll", "cummax", "cummin", "clamp", "clamp_min", "clamp_max",
})
_LOSS_FUNCTIONS = frozenset({
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss",
    "poisson_nll_loss", "gaussian_nll_loss", "cosine_embedding_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "multi_margin_loss", "triplet_margin_loss",
})
_SCALAR_FUNCTIONS = frozenset({
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.get_total_norm", "torch.dot", "torch.dist", "torch.linalg.vector_norm",
})


@dataclass(frozen=True)
class Partner:
    """The tensor a use of a value meets in arithmetic."""

    #: The tensor expression.
    tensor: cst.BaseExpression
    #: Whether ``tensor`` can be written twice (``x.dtype`` next to ``x``): names and
    #: attribute chains only, which evaluate to the same object without side effects.
    repeatable: bool
    #: The operand that meets ``tensor``: the use itself, or the host arithmetic around
    #: it (``1 - v`` in ``(1 - v) * x``). A cast belongs here, after the host arithmetic,
    #: which Python did in float64 before the number met the tensor.
    top: cst.BaseExpression
    #: False when ``tensor`` is only presumed to be one: an unannotated argument of
    #: ``forward`` or of a compiled function.
    certain: bool = True


def tensor_partner(analysis: ModuleAnalysis, use: cst.BaseExpression) -> Partner | None:
    """The tensor that the value at ``use`` meets in arithmetic, or None.

    ``use`` may pass through host arithmetic first: in ``(1 - v) * x`` the partner
    of ``v`` is ``x``. Every other operand on the way must be a host value without
    side effects (numbers, names), so that evaluating it on a tensor changes nothing.
    """
    md = analysis.md
    current: cst.CSTNode = use
    while True:
        parent = md.parent(current)
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator,
                                                                 (cst.Minus, cst.Plus)):
            current = parent
            continue
        if isinstance(parent, cst.BinaryOperation):
            other = parent.right if parent.left is current else parent.left
            kind = analysis.kind(other)
            if kind is Kind.TENSOR and isinstance(parent.operator, TENSOR_ARITHMETIC):
                return Partner(other, is_repeatable(other), current)  # type: ignore[arg-type]
            if is_model_argument(analysis, other) and isinstance(parent.operator,
                                                                 TENSOR_ARITHMETIC):
                return Partner(other, True, current, certain=False)  # type: ignore[arg-type]
            if kind is Kind.HOST and isinstance(parent.operator, HOST_ARITHMETIC) and (
                is_plain_host(other)
            ):
                current = parent
                continue
            return None
        if isinstance(parent, cst.Arg) and parent.keyword is None and not parent.star:
            call = md.parent(parent)
            if not isinstance(call, cst.Call):
                return None
            return _call_partner(analysis, call, parent, current)  # type: ignore[arg-type]
        return None


def is_model_argument(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """An argument of ``forward`` or of a compiled function whose kind is unknown:
    presumably a tensor (what models are called with), but not certainly."""
    if not isinstance(expr, cst.Name) or analysis.kind(expr) is not Kind.UNKNOWN:
        return False
    access = analysis.md.access(expr)
    referents = list(access.referents) if access is not None else []
    if len(referents) != 1 or not isinstance(referents[0].node, cst.Param):
        return False
    parameters = analysis.md.parent(referents[0].node)
    func = analysis.md.parent(parameters) if parameters is not None else None
    return isinstance(func, cst.FunctionDef) and analysis.hot.hot_function_reason(func) in (
        "in forward", "in a compiled function")  # not a lambda's parameter


def _call_partner(analysis: ModuleAnalysis, call: cst.Call, arg: cst.Arg,
                  top: cst.BaseExpression) -> Partner | None:
    if any(a.keyword is not None or a.star for a in call.args):
        return None
    func = call.func
    if len(call.args) == 1 and isinstance(func, cst.Attribute) and (
        func.attr.value in OPERAND_METHODS and analysis.kind(func.value) is Kind.TENSOR
    ):
        return Partner(func.value, is_repeatable(func.value), top)
    if len(call.args) == 2 and call.args[1] is arg and (
        analysis.md.qualified_names(func) & OPERAND_FUNCTIONS
    ):
        tensor = call.args[0].value
        if analysis.kind(tensor) is Kind.TENSOR:
            return Partner(tensor, is_repeatable(tensor), top)
    return None


def is_plain_host(expr: cst.BaseExpression) -> bool:
    """Numbers, names and attribute chains: host values that are safe to evaluate."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return is_plain_host(expr.expression)
    return is_repeatable(expr)


def is_repeatable(expr: cst.BaseExpression) -> bool:
    """A name or a chain of attributes on a name: evaluating it twice is harmless."""
    if isinstance(expr, cst.Name):
        return True
    if isinstance(expr, cst.Attribute):
        return is_repeatable(expr.value)
    return False


def partner_cast(analysis: ModuleAnalysis, kept: cst.BaseExpression, partner: Partner,
                 category: str) -> tuple[cst.BaseExpression, bool]:
    """``kept`` (the rewritten ``partner.top``) as it must meet ``partner``: ``kept.to(x)``,
    and whether that is certainly exact.

    ``category`` is the type of Python number the kept tensor replaces ("float" or
    "int"). A Python ``float`` leaves a floating partner's dtype as it is, and a
    Python ``int`` leaves an integer or floating partner's dtype: casting the kept
    tensor to the partner's dtype does the same. ``.to(x)`` also moves it to ``x``'s
    device, where a Python number went anywhere (a no-op when it is there already).
    When the partner's dtype family is unknown the cast is still exact if the
    partner is floating, but not for an integer partner (Python would have promoted
    to the default float dtype): the second value is then False.
    """
    family = dtype_family(analysis, partner.tensor)
    if _has_float_step(partner.top):
        category = "float"  # host arithmetic such as `n / 2` made a float of an int
    cast = method_call(kept, "to", partner.tensor)
    exact = family == "float" or (category == "int" and family == "int")
    return cast, exact


def _has_float_step(expr: cst.BaseExpression) -> bool:
    """Whether host arithmetic makes a float of an int: true division or a float literal."""
    if isinstance(expr, cst.Float):
        return True
    if isinstance(expr, cst.BinaryOperation):
        return isinstance(expr.operator, cst.Divide) or _has_float_step(
            expr.left) or _has_float_step(expr.right)
    if isinstance(expr, cst.UnaryOperation):
        return _has_float_step(expr.expression)
    return False


def dtype_family(analysis: ModuleAnalysis, expr: cst.BaseExpression,
                 depth: int = 0) -> str | None:
    """"float", "int" or "bool" when the dtype family of a tensor expression is certain.

    Extends ``TensorFacts.dtype_class`` through names bound once and true division.
    """
    found = analysis.tensors.dtype_class(expr)
    if found is not None or depth > 6:
        return found
    if isinstance(expr, cst.Name):
        value = single_binding_value(analysis, expr)
        return dtype_family(analysis, value, depth + 1) if value is not None else None
    if isinstance(expr, cst.BinaryOperation) and analysis.kind(expr) is Kind.TENSOR:
        if isinstance(expr.operator, cst.Divide):
            return "float"
        sides = [dtype_family(analysis, s, depth + 1) if analysis.kind(s) is Kind.TENSOR
                 else ("float" if isinstance(s, cst.Float) else None)
                 for s in (expr.left, expr.right)]
        if "float" in sides and isinstance(expr.operator, TENSOR_ARITHMETIC):
            return "float"
        return None
    if isinstance(expr, cst.Subscript) and analysis.kind(expr.value) is Kind.TENSOR:
        return dtype_family(analysis, expr.value, depth + 1)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and (
        analysis.kind(expr.func.value) is Kind.TENSOR
    ):
        method = expr.func.attr.value
        if method in ("sum", "cumsum") and not expr.args:
            inner = dtype_family(analysis, expr.func.value, depth + 1)
            return "int" if inner in ("bool", "int") else inner
        if method in _SAME_FAMILY:
            return dtype_family(analysis, expr.func.value, depth + 1)
        return None
    if isinstance(expr, cst.Call):
        qnames = analysis.md.qualified_names(expr.func)
        if "torch.tensor" in qnames and keyword_arg(expr, "dtype") is None and expr.args:
            return _literal_family(expr.args[0].value)
        if qnames & {"torch.randn", "torch.rand", "torch.randn_like", "torch.rand_like"} and (
            keyword_arg(expr, "dtype") is None
        ):
            return "float"
        if any(q.startswith("torch.nn.functional.") and q.rsplit(".", 1)[-1] in _LOSS_FUNCTIONS
               for q in qnames):
            return "float"
    return None


def _literal_family(value: cst.BaseExpression) -> str | None:
    """The dtype family ``torch.tensor`` gives a literal number or list of numbers."""
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, (cst.Minus,
                                                                             cst.Plus)):
        value = value.expression
    if isinstance(value, cst.Float):
        return "float"
    if isinstance(value, cst.Integer):
        return "int"
    if isinstance(value, (cst.List, cst.Tuple)) and value.elements:
        families = {_literal_family(e.value) for e in value.elements}
        if None in families:
            return None
        return "float" if "float" in families else "int"
    return None


def single_binding_value(analysis: ModuleAnalysis,
                         name: cst.Name) -> cst.BaseExpression | None:
    """The value of ``name = value`` (or ``name: T = value``) when that is the only binding
    of the name in its scope."""
    access = analysis.md.access(name)
    if access is None or access.scope is None:
        return None
    assignments = list(access.scope.assignments[name.value])
    if len(assignments) != 1 or list(access.referents) != assignments:
        return None
    target = assignments[0].node
    assign = assignment_of(analysis.md, target)
    if assign is not None and len(assign.targets) == 1:
        return assign.value
    annotated = analysis.md.parent(target) if isinstance(target, cst.Name) else None
    if isinstance(annotated, cst.AnnAssign) and annotated.target is target:
        return annotated.value
    return None


def is_scalar_shaped(analysis: ModuleAnalysis, expr: cst.BaseExpression,
                     depth: int = 0) -> bool:
    """Whether ``expr`` is certainly a 0-dim tensor (a full reduction, a loss, a norm...)."""
    if depth > 6:
        return False
    if isinstance(expr, cst.Name):
        value = single_binding_value(analysis, expr)
        return value is not None and is_scalar_shaped(analysis, value, depth + 1)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return is_scalar_shaped(analysis, expr.expression, depth + 1)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, TENSOR_ARITHMETIC):
        tensors = [s for s in (expr.left, expr.right) if analysis.kind(s) is not Kind.HOST]
        hosts = [s for s in (expr.left, expr.right) if analysis.kind(s) is Kind.HOST]
        return bool(tensors) and all(
            is_scalar_shaped(analysis, s, depth + 1) for s in tensors) and all(
            is_plain_host(s) for s in hosts)
    if not isinstance(expr, cst.Call):
        return False
    qnames = analysis.md.qualified_names(expr.func)
    args = positional_args(expr)
    if qnames & _SCALAR_FUNCTIONS:
        return not any(a.keyword is not None and a.keyword.value == "dim" for a in expr.args)
    for q in qnames:
        last = q.rsplit(".", 1)[-1]
        if q.startswith("torch.nn.functional.") and last in _LOSS_FUNCTIONS:
            reduction = keyword_arg(expr, "reduction")
            return reduction is None or (isinstance(reduction, cst.SimpleString)
                                         and reduction.evaluated_value in ("mean", "sum"))
        if q == f"torch.{last}" and len(expr.args) == 1 and len(args) == 1:
            if last in _FULL_REDUCTIONS:
                return True
            if last in _ELEMENTWISE:
                return is_scalar_shaped(analysis, args[0], depth + 1)
        if q == "torch.tensor" and args and analysis.kind(args[0]) is Kind.HOST and (
            isinstance(args[0], (cst.Integer, cst.Float, cst.Name, cst.UnaryOperation))
        ):
            return True
    func = expr.func
    if isinstance(func, cst.Attribute) and analysis.kind(func.value) is Kind.TENSOR:
        method = func.attr.value
        if method in _FULL_REDUCTIONS and not expr.args:
            return True
        if method in _ELEMENTWISE | _SAME_SHAPE_ALIASING and (
            method != "to" or not positional_args(expr) or analysis.kind(
                positional_args(expr)[0]) is Kind.HOST
        ):
            return is_scalar_shaped(analysis, func.value, depth + 1)
    return False


def is_fresh(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` computes a new tensor that nothing else refers to."""
    if isinstance(expr, cst.BinaryOperation):
        return analysis.kind(expr) is Kind.TENSOR
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return analysis.kind(expr) is Kind.TENSOR
    if not isinstance(expr, cst.Call):
        return False
    qnames = analysis.md.qualified_names(expr.func)
    if qnames & (_SCALAR_FUNCTIONS | {"torch.tensor"}):  # torch.tensor always copies
        return True
    for q in qnames:
        last = q.rsplit(".", 1)[-1]
        if q.startswith("torch.nn.functional.") and last in _LOSS_FUNCTIONS:
            return True
        if q == f"torch.{last}" and (last in _FULL_REDUCTIONS or last in _ELEMENTWISE):
            return True
    func = expr.func
    if isinstance(func, cst.Attribute) and analysis.kind(func.value) is Kind.TENSOR:
        return func.attr.value in _FULL_REDUCTIONS | _ELEMENTWISE
    return False


def may_be_mutated(analysis: ModuleAnalysis, tensor: cst.BaseExpression) -> bool:
    """Whether the tensor that ``tensor`` names may change in place after it is read.

    False only for a fresh computation, or a name bound once to one whose every use
    reads it without writing: an operand, the receiver of a method that does not
    end in ``_``, or the argument of a torch function that does not write its inputs.
    """
    if is_fresh(analysis, tensor):
        return False
    if not isinstance(tensor, cst.Name):
        return True
    value = single_binding_value(analysis, tensor)
    if value is None or not is_fresh(analysis, value):
        return True
    access = analysis.md.access(tensor)
    assert access is not None  # single_binding_value checked it
    for assignment in access.referents:
        for reference in assignment.references:
            if not _reads_only(analysis, reference.node):
                return True
    return False


def _reads_only(analysis: ModuleAnalysis, node: cst.CSTNode) -> bool:
    md = analysis.md
    parent = md.parent(node)
    if isinstance(parent, (cst.BinaryOperation, cst.Comparison, cst.ComparisonTarget,
                           cst.UnaryOperation, cst.FormattedStringExpression)):
        return True
    if isinstance(parent, cst.Attribute) and parent.value is node:
        holder = md.parent(parent)
        if isinstance(holder, cst.Call) and holder.func is parent:
            method = parent.attr.value
            return not (method.endswith("_") and not method.endswith("__"))
        return parent.attr.value in T.TENSOR_HOST_ATTRIBUTES
    if isinstance(parent, cst.Arg) and parent.keyword is None:
        call = md.parent(parent)
        if not isinstance(call, cst.Call) or keyword_arg(call, "out") is not None:
            return False
        for q in md.qualified_names(call.func):
            root, _, rest = q.partition(".")
            if root == "builtins" and rest in ("float", "int", "bool", "print", "len", "str",
                                               "isinstance"):
                return True
            if root == "torch" and rest in T.TORCH_TENSOR_FUNCTIONS and not rest.endswith("_"):
                return True
        return call_name(call) in ("item", "tolist")
    return False


@dataclass(frozen=True)
class KeptRead:
    """A read replaced by a tensor: the new expression and the number it stands for."""

    expression: cst.BaseExpression
    #: "float" or "int": the type of Python number the read produced.
    category: str
    #: False when the stand-in is exact only on the usual inputs (the fix is unsafe).
    exact: bool


def kept_read(analysis: ModuleAnalysis, read: HostRead) -> KeptRead | None:
    """The tensor that stands in for ``read`` (``float(t)``, ``int(t)``, ``t.item()``).

    ``t.detach()`` (the read also cut autograd), then ``.trunc()`` for ``int()`` of a
    floating tensor, ``.reshape(())`` unless ``t`` is certainly 0-dim (a shape ``[1]``
    tensor would broadcast a 0-dim partner; ``reshape`` fails on several elements, as
    ``.item()`` does) and ``.clone()`` when ``t`` may change in place before the use
    (``detach`` shares storage). None for ``bool`` reads and lists.
    """
    family = dtype_family(analysis, read.tensor)
    exact = read.certain
    truncate = False
    if read.how == "float":
        category = "float"
    elif read.how == "int":
        category = "int"
        truncate = family != "int" and family != "bool"
        exact = exact and family is not None
    elif read.how == "item":
        if family == "bool":
            return None
        category = "int" if family == "int" else "float"
        exact = exact and family is not None
    else:
        return None
    expression = detached(read.tensor)
    if not is_scalar_shaped(analysis, read.tensor):
        expression = method_call(expression, "reshape", cst.Tuple([]))
    if truncate:
        expression = method_call(expression, "trunc")
    elif may_be_mutated(analysis, read.tensor):
        expression = method_call(expression, "clone")
    return KeptRead(expression, category, exact)


def sole_binding_uses(analysis: ModuleAnalysis, target: cst.Name) -> list[cst.Name] | None:
    """Every load of ``target`` when its assignment is the name's only binding in its scope.

    None when the name is bound elsewhere too, used in a nested scope, or never used.
    """
    scope = analysis.md.scope(target)
    if scope is None:
        return None
    assignments = list(scope.assignments[target.value])
    if len(assignments) != 1 or assignments[0].node is not target:
        return None
    uses = []
    for access in sorted(assignments[0].references,
                         key=lambda a: analysis.md.source_order(a.node)):
        if access.scope is not scope or not isinstance(access.node, cst.Name):
            return None
        uses.append(access.node)
    return uses or None


def tensor_uses(analysis: ModuleAnalysis,
                target: cst.Name) -> list[tuple[cst.Name, Partner]] | None:
    """The uses of ``target`` with the tensor each meets, when every use meets one."""
    uses = sole_binding_uses(analysis, target)
    if uses is None:
        return None
    found = []
    for use in uses:
        partner = tensor_partner(analysis, use)
        if partner is None:
            return None
        found.append((use, partner))
    return found


def value_tensor_uses(analysis: ModuleAnalysis, value: cst.BaseExpression,
                      ) -> list[tuple[cst.CSTNode, Partner]] | None:
    """Where ``value`` meets tensors: as an operand in place, or through ``v = value``
    when every use of ``v`` meets one."""
    partner = tensor_partner(analysis, value)
    if partner is not None:
        return [(value, partner)]
    parent = analysis.md.parent(value)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(
        parent.targets[0].target, cst.Name
    ):
        return tensor_uses(analysis, parent.targets[0].target)  # type: ignore
    return None
