"""Facts about device values that the bookkeeping rules (NSY201-NSY204) need to stay exact.

* :func:`dtype_family` — "float", "int", "bool" or None: what a host read of the tensor
  hands Python (a float, an int, a bool). Extends the analysis's ``dtype_class`` with
  names (followed to their bindings), ``x.backward()`` (only floating tensors have
  gradients) and the loss modules of ``torch.nn``.
* :func:`is_int64` — the tensor is certainly int64 (counts: ``sum`` of bools, ``argmax``).
* :func:`is_fresh` — the tensor was just computed and nothing else holds or changes it,
  so a reference to it may be kept (in a list) instead of a copy of its value.
* :func:`float_literal_exact` — a number literal that every floating dtype holds exactly.
"""

from __future__ import annotations

import math
import struct

import libcst as cst
from libcst.metadata.scope_provider import Assignment

from ..analysis import Kind, ModuleAnalysis
from ..analysis import _tables as T
from ..analysis.base import own_code_nodes, positional_args

#: Methods that always produce floating results from floating inputs (and fail on others).
_FLOAT_METHODS = frozenset({
    "mean", "std", "var", "sigmoid", "softmax", "log_softmax", "exp", "log", "sqrt", "tanh",
    "norm", "log1p", "expm1", "rsqrt", "sin", "cos", "logsumexp", "nanmean", "erf",
    "float", "double", "half", "bfloat16",
})
#: Methods whose result is int64 whatever their receiver.
_INT64_METHODS = frozenset({"argmax", "argmin", "argsort", "count_nonzero", "nonzero", "long"})
_INT_METHODS = frozenset({"int", "short", "byte", "char"})
#: Reductions that give int64 for integer and bool inputs, and keep floating dtypes.
_SUMS = frozenset({"sum", "cumsum", "nansum", "prod"})
_INT64_TORCH = frozenset({
    "torch.argmax", "torch.argmin", "torch.count_nonzero", "torch.argsort",
})
_FLOAT_TORCH = frozenset({
    "torch.mean", "torch.exp", "torch.log", "torch.sigmoid", "torch.sqrt", "torch.tanh",
    "torch.norm", "torch.std", "torch.var", "torch.softmax", "torch.log_softmax",
    "torch.logsumexp", "torch.linalg.norm", "torch.linalg.vector_norm",
    "torch.linalg.matrix_norm", "torch.nn.utils.clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.get_total_norm",
    *(f"torch.nn.functional.{loss}" for loss in (
        "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
        "mse_loss", "l1_loss", "nll_loss", "kl_div", "smooth_l1_loss", "huber_loss",
        "poisson_nll_loss", "gaussian_nll_loss", "cosine_embedding_loss", "margin_ranking_loss",
    )),
})

#: Methods that allocate a new tensor for their result (never a view, never ``self``).
_FRESH_METHODS = frozenset({
    "sum", "mean", "std", "var", "norm", "prod", "amax", "amin", "argmax", "argmin",
    "logsumexp", "count_nonzero", "all", "any", "nansum", "nanmean", "median",
    "abs", "neg", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "softmax",
    "log_softmax", "square", "pow", "add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt",
    "ge", "isnan", "isinf", "isfinite", "clone", "log1p", "expm1", "clamp", "clip",
    "logical_and", "logical_or", "logical_not", "sin", "cos", "floor", "ceil", "round",
    "cumsum", "nan_to_num", "dot", "matmul", "mm", "bmm", "where", "masked_fill",
})
_FRESH_TORCH = frozenset(
    {f"torch.{name}" for name in _FRESH_METHODS if name not in ("clone",)}
    | {"torch.tensor", "torch.stack", "torch.cat", "torch.linalg.norm",
       "torch.linalg.vector_norm", "torch.nn.utils.clip_grad_norm_",
       "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.get_total_norm",
       "torch.clone", "torch.maximum", "torch.minimum"}
)
#: Methods that alias their receiver's storage: fresh when the receiver is.
_ALIASING_METHODS = frozenset({"detach", "view", "reshape", "squeeze", "unsqueeze", "flatten"})


def dtype_family(analysis: ModuleAnalysis, expr: cst.BaseExpression,
                 _seen: frozenset[int] = frozenset()) -> str | None:
    """"float", "int" or "bool" when the dtype family of tensor ``expr`` is certain."""
    if id(expr) in _seen:
        return None
    seen = _seen | {id(expr)}
    known = analysis.tensors.dtype_class(expr)
    if known is not None:
        return known
    if isinstance(expr, cst.Name):
        return _name_family(analysis, expr, seen)
    if isinstance(expr, cst.Subscript):
        return dtype_family(analysis, expr.value, seen)
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("data", "grad"):
        return dtype_family(analysis, expr.value, seen)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return dtype_family(analysis, expr.expression, seen)
    if isinstance(expr, cst.BinaryOperation):
        return _binary_family(analysis, expr, seen)
    if isinstance(expr, cst.Call):
        return _call_family(analysis, expr, seen)
    return None


def _name_family(analysis: ModuleAnalysis, name: cst.Name, seen: frozenset[int]) -> str | None:
    access = analysis.md.access(name)
    if access is None:
        return None
    referents = _reaching(analysis, name, list(access.referents))
    if not referents:
        return None
    families = set()
    for referent in referents:
        if not isinstance(referent, Assignment) or not isinstance(referent.node, cst.Name):
            return None
        value = _bound_value(analysis, referent.node)
        if value is None:
            return None
        families.add(dtype_family(analysis, value, seen))
    if len(families) == 1 and None not in families:
        return families.pop()
    if _has_backward(analysis, name):
        return "float"  # only floating tensors have gradients
    return None


def _reaching(analysis: ModuleAnalysis, name: cst.Name, referents: list) -> list:  # type: ignore[type-arg]
    """The bindings that can reach ``name`` (a plain assignment before it hides older ones)."""
    if len(referents) <= 1:
        return referents
    return analysis.tensors._reaching(name, referents)


def _bound_value(analysis: ModuleAnalysis, target: cst.Name) -> cst.BaseExpression | None:
    parent = analysis.md.parent(target)
    if isinstance(parent, cst.AssignTarget):
        assign = analysis.md.parent(parent)
        if isinstance(assign, cst.Assign):
            return assign.value
    if isinstance(parent, cst.AnnAssign):
        return parent.value
    return None


def _has_backward(analysis: ModuleAnalysis, name: cst.Name) -> bool:
    """Whether ``name.backward()`` is called on the same binding somewhere in its scope.

    The bindings that reach some ``name.backward()`` are gathered once per scope and name
    (comparing each use's bindings with every other use's was cubic in a function that
    binds a name again and again)."""
    scope = analysis.md.scope(name)
    access = analysis.md.access(name)
    if scope is None or access is None:
        return False
    known = analysis.memo("device.backward_bindings")
    key = (id(scope), name.value)
    backward = known.get(key)
    if backward is None:
        backward = set()
        for other in scope.accesses[name.value]:
            node = other.node
            attribute = analysis.md.parent(node)
            if isinstance(attribute, cst.Attribute) and attribute.value is node and (
                attribute.attr.value == "backward"
            ) and isinstance(analysis.md.parent(attribute), cst.Call):
                backward.update(id(r) for r in other.referents)
        known[key] = backward
    return any(id(r) in backward for r in access.referents)  # type: ignore[operator]


def _binary_family(analysis: ModuleAnalysis, expr: cst.BinaryOperation,
                   seen: frozenset[int]) -> str | None:
    if isinstance(expr.operator, cst.Divide):
        return "float"
    sides = [_operand_family(analysis, side, seen) for side in (expr.left, expr.right)]
    if "float" in sides:
        return "float"  # a float tensor with any number stays floating
    if None in sides:
        return None
    if isinstance(expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)) and sides == ["bool"] * 2:
        return "bool"
    return "int"


def _operand_family(analysis: ModuleAnalysis, operand: cst.BaseExpression,
                    seen: frozenset[int]) -> str | None:
    if isinstance(operand, cst.Float):
        return "float"
    if isinstance(operand, cst.Integer):
        return "int"
    if analysis.kind(operand) is Kind.HOST:
        return None  # a host number of unknown type (it keeps a float tensor floating)
    return dtype_family(analysis, operand, seen)


def _call_family(analysis: ModuleAnalysis, call: cst.Call, seen: frozenset[int]) -> str | None:
    func = call.func
    qnames = analysis.md.qualified_names(func)
    dtype = next((a.value for a in call.args if a.keyword is not None
                  and a.keyword.value == "dtype"), None)
    if dtype is not None and analysis.kind(call) is Kind.TENSOR:
        return _DTYPE_FAMILIES.get(next(iter(analysis.md.qualified_names(dtype)), ""))
    if qnames & _INT64_TORCH:
        return "int"
    if qnames & _FLOAT_TORCH:
        return "float"
    # The rules ask only about values they treat as tensors (certainly, or plausibly for
    # an unsafe fix), so a method's receiver is taken to be one unless it is a host value.
    if isinstance(func, cst.Attribute) and analysis.kind(func.value) is not Kind.HOST:
        method = func.attr.value
        if method in _FLOAT_METHODS:
            return "float"
        if method in T.BOOL_METHODS:
            return "bool"
        if method in _INT64_METHODS or method in _INT_METHODS:
            return "int"
        if method in _SUMS and not _has_dtype_argument(call):
            inner = dtype_family(analysis, func.value, seen)
            return "int" if inner in ("int", "bool") else inner
        if method in T.SAME_DTYPE_FAMILY_METHODS:
            return dtype_family(analysis, func.value, seen)
        return None
    if _is_loss_module_call(analysis, call):
        return "float"
    return _local_function_family(analysis, call, seen)


def _local_function_family(analysis: ModuleAnalysis, call: cst.Call,
                           seen: frozenset[int]) -> str | None:
    """The family every ``return`` of a function of this module gives, when they agree
    (``def loss_function(...): ...; return bce + kld`` is float)."""
    definition = analysis.tensors._local_definition(call.func)
    if not isinstance(definition, cst.FunctionDef) or id(definition) in seen:
        return None
    returns = _own_returns(definition)
    if not returns or any(r.value is None for r in returns):
        return None
    families = {dtype_family(analysis, r.value, seen | {id(definition)})  # type: ignore[arg-type]
                for r in returns}
    return families.pop() if len(families) == 1 else None


def _own_returns(function: cst.FunctionDef) -> list[cst.Return]:
    """The ``return`` statements of ``function`` itself, not of functions nested in it."""
    return own_code_nodes(function, (cst.Return,), in_lambdas=False)  # type: ignore[return-value]


_DTYPE_FAMILIES = {
    **{f"torch.{n}": "float" for n in ("float", "float32", "double", "float64", "half",
                                        "float16", "bfloat16")},
    **{f"torch.{n}": "int" for n in ("long", "int64", "int", "int32", "short", "int16",
                                      "int8", "uint8")},
    "torch.bool": "bool",
}


def _has_dtype_argument(call: cst.Call) -> bool:
    return any(a.keyword is not None and a.keyword.value == "dtype" for a in call.args)


def _is_loss_module_call(analysis: ModuleAnalysis, call: cst.Call) -> bool:
    """``criterion(out, y)`` where ``criterion = nn.CrossEntropyLoss()`` (any ``torch.nn`` loss)."""
    func = call.func
    if not isinstance(func, cst.Name):
        return False
    access = analysis.md.access(func)
    if access is None:
        return False
    referents = list(access.referents)
    if not referents:
        return False
    for referent in referents:
        if not isinstance(referent, Assignment) or not isinstance(referent.node, cst.Name):
            return False
        value = _bound_value(analysis, referent.node)
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and (
            value.func.attr.value in ("to", "cuda", "cpu", "train", "eval")
        ):
            value = value.func.value  # `nn.CrossEntropyLoss().to(device)`
        if not isinstance(value, cst.Call):
            return False
        if not any(q.startswith("torch.nn.") and q.endswith("Loss")
                   for q in analysis.md.qualified_names(value.func)):
            return False
    return True


def is_int64(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """Whether tensor ``expr`` is certainly int64 (so summing it never overflows early)."""
    if isinstance(expr, cst.Call):
        qnames = analysis.md.qualified_names(expr.func)
        if qnames & _INT64_TORCH:
            return True
        if "torch.sum" in qnames and len(expr.args) == 1:
            return dtype_family(analysis, expr.args[0].value) in ("int", "bool")
        func = expr.func
        if isinstance(func, cst.Attribute) and analysis.kind(func.value) is not Kind.HOST:
            method = func.attr.value
            if method in _INT64_METHODS:
                return True
            if method in ("sum", "nansum") and not positional_args(expr) and (
                not _has_dtype_argument(expr)
            ):
                return dtype_family(analysis, func.value) in ("int", "bool")
            if method in ("detach", "clone", "squeeze", "view", "reshape", "flatten"):
                return is_int64(analysis, func.value)
    if isinstance(expr, cst.Name):
        access = analysis.md.access(expr)
        if access is None or not access.referents:
            return False
        for referent in _reaching(analysis, expr, list(access.referents)):
            if not isinstance(referent, Assignment) or not isinstance(referent.node, cst.Name):
                return False
            value = _bound_value(analysis, referent.node)
            if value is None or value is expr or not is_int64(analysis, value):
                return False
        return True
    return False


# -- freshness ---------------------------------------------------------------------------------


def is_fresh(analysis: ModuleAnalysis, expr: cst.BaseExpression, at: cst.CSTNode,
             loop: cst.For | cst.While) -> bool:
    """Whether the tensor ``expr`` (evaluated at ``at``, in ``loop``) may be kept by reference.

    True when it is a new tensor that nothing else holds or changes later: the result
    of arithmetic, a comparison, a reduction or another allocating call, or a name
    bound to one earlier in the same turn of the loop and never changed in place.
    Keeping a view instead (``out[0]``, ``model.scale``) would see later in-place
    updates and keep the whole base tensor alive.
    """
    if isinstance(expr, (cst.BinaryOperation, cst.Comparison)):
        return analysis.kind(expr) is Kind.TENSOR
    if isinstance(expr, cst.UnaryOperation):
        return isinstance(expr.operator, cst.Minus) and analysis.kind(expr) is Kind.TENSOR
    if isinstance(expr, cst.Call):
        func = expr.func
        if analysis.md.qualified_names(func) & _FRESH_TORCH:
            return True
        if any(q.startswith("torch.nn.functional.") and (q.endswith("_loss") or q.endswith(
                ("cross_entropy", "kl_div", "binary_cross_entropy_with_logits")))
               for q in analysis.md.qualified_names(func)):
            return True
        if _is_loss_module_call(analysis, expr):
            return True
        if isinstance(func, cst.Attribute) and analysis.kind(func.value) is not Kind.HOST:
            method = func.attr.value
            if method in _FRESH_METHODS:
                return True  # a tensor method that allocates its result
            if method in _ALIASING_METHODS:
                return is_fresh(analysis, func.value, at, loop)
        return False
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        return is_fresh(analysis, expr.value, at, loop)
    if isinstance(expr, cst.Name):
        return _fresh_name(analysis, expr, at, loop)
    return False


def _fresh_name(analysis: ModuleAnalysis, name: cst.Name, at: cst.CSTNode,
                loop: cst.For | cst.While) -> bool:
    """A name bound once in the loop, to a fresh tensor, before ``at`` in every turn, and
    not changed in place anywhere in the loop except between that binding and ``at``."""
    md = analysis.md
    scope = md.scope(name)
    if scope is None:
        return False
    bindings = [a for a in scope.assignments[name.value]
                if isinstance(a, Assignment) and md.is_ancestor(loop.body, a.node)]
    if len(bindings) != 1 or not isinstance(bindings[0].node, cst.Name):
        return False
    target = bindings[0].node
    value = _bound_value(analysis, target)
    binder = md.statement_of(target)
    if value is None or binder is None or not is_fresh(analysis, value, binder, loop):
        return False
    block = md.parent(binder)
    if not isinstance(block, cst.IndentedBlock):
        return False
    body = list(block.body)
    holder = _statement_in(md, at, block)
    if holder is None or body.index(binder) >= body.index(holder):
        return False
    before = body[body.index(binder) + 1: body.index(holder)]
    for other in scope.accesses[name.value]:
        use = other.node
        if not md.is_ancestor(loop.body, use):
            continue
        if any(md.is_ancestor(statement, use) for statement in before):
            continue  # runs after the binding and before the reference is kept
        if _changes_tensor(analysis, use):
            return False
    return True


def _statement_in(md, node: cst.CSTNode, block: cst.CSTNode) -> cst.CSTNode | None:  # type: ignore[no-untyped-def]
    """The statement of ``block`` that holds ``node``."""
    current: cst.CSTNode | None = node
    while current is not None:
        parent = md.parent(current)
        if parent is block:
            return current
        current = parent
    return None


def _changes_tensor(analysis: ModuleAnalysis, use: cst.CSTNode) -> bool:
    """Whether this use of a name may change the tensor it holds in place."""
    md = analysis.md
    parent = md.parent(use)
    if isinstance(parent, cst.Attribute) and parent.value is use:
        call = md.parent(parent)
        if isinstance(call, cst.Call) and call.func is parent:
            method = parent.attr.value
            return method.endswith("_") and not method.endswith("__")
        return parent.attr.value in ("data", "grad")  # `x.data.zero_()` and the like
    if isinstance(parent, (cst.AugAssign,)) and parent.target is use:
        return True
    if isinstance(parent, cst.Subscript):
        return _is_store_target(md, parent)
    if isinstance(parent, cst.Arg):
        call = md.parent(parent)
        if not isinstance(call, cst.Call):
            return True
        qnames = md.qualified_names(call.func)
        if any(q.startswith("builtins.") for q in qnames):
            return False
        if any(q.startswith("torch.") and not q.startswith("torch.distributed")
               and not q.rsplit(".", 1)[-1].endswith("_") for q in qnames):
            inplace = next((a for a in call.args if a.keyword is not None
                            and a.keyword.value == "inplace"), None)
            return inplace is not None and not (isinstance(inplace.value, cst.Name)
                                                and inplace.value.value == "False")
        return True  # an unknown function may change its argument in place
    return False


def _is_store_target(md, node: cst.CSTNode) -> bool:  # type: ignore[no-untyped-def]
    parent = md.parent(node)
    if isinstance(parent, cst.AssignTarget):
        return True
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node:
        return True
    return isinstance(parent, cst.Del)


# -- literals ----------------------------------------------------------------------------------


def literal_value(expr: cst.BaseExpression) -> float | int | None:
    """The number a literal stands for: ``0.0``, ``-1``, ``float("inf")``, ``-math.inf``."""
    sign = 1
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        sign = -1 if isinstance(expr.operator, cst.Minus) else 1
        expr = expr.expression
    value: float | int | None = None
    if isinstance(expr, (cst.Float, cst.Integer)):
        value = expr.evaluated_value
    elif (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name)
          and expr.func.value == "float" and len(expr.args) == 1
          and isinstance(expr.args[0].value, cst.SimpleString)):
        try:
            value = float(str(expr.args[0].value.evaluated_value))
        except ValueError:
            return None
    elif (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)
          and expr.value.value in ("math", "np", "numpy", "torch")):
        value = {"inf": math.inf, "nan": math.nan}.get(expr.attr.value)
    if value is None:
        return None
    return sign * value


def float_literal_exact(value: float | int) -> bool:
    """Whether float16, bfloat16, float32 and float64 all hold ``value`` exactly."""
    value = float(value)
    if math.isinf(value) or math.isnan(value):
        return True
    try:
        half = struct.unpack("e", struct.pack("e", value))[0]
    except (OverflowError, struct.error):
        return False
    single_bits = struct.unpack("I", struct.pack("f", value))[0]
    single = struct.unpack("f", struct.pack("f", value))[0]
    return half == value and single == value and single_bits & 0xFFFF == 0


def int_literal_small(value: float | int) -> bool:
    """Whether every integer dtype (int8 and up, uint8 for non-negatives) holds ``value``."""
    return isinstance(value, int) and -128 <= value <= 127
