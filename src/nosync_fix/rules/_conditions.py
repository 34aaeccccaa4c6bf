"""Device conditions: tests that make the host read a device value, and their tensor form.

``if loss.item() > 5:``, ``if torch.isnan(loss).any():``, ``while (x - y).abs().max() > tol:``
all make the host wait for the device: Python needs a ``bool``. :func:`device_condition`
recognises such tests and, where it can, writes the same test as a boolean tensor that
``torch.where`` / ``torch.cond`` can consume: host reads are dropped (``loss.item() > 5``
becomes ``loss > 5``) and ``and`` / ``or`` / ``not`` become ``&`` / ``|`` / ``~``.

The tensor form can differ from the original test at edges, and each such edge is named
in :attr:`Condition.unsafe_reasons`:

* the original raises when a tensor with more than one element is tested; ``where``
  broadcasts instead. Only a condition proven 0-dim (``t.any()``, ``t.sum() > 0``) is
  free of this; ``.item()`` accepts a one-element tensor of any shape, which ``where``
  would broadcast too;
* ``t.item() > 0.1`` compares in float64 on the host, ``t > 0.1`` in the tensor's dtype,
  where 0.1 is rounded: only thresholds exact in every dtype (small integers, 0.5, ...)
  give the same answer for every value.

This module also works around an analysis gap: LibCST names ``torch.isnan(x).any`` as
``torch.isnan.any``, so the analysis does not see ``torch.isnan(x).any()`` as a tensor
method call. :func:`tensor_kind`, :func:`expression_effect` and :func:`dtype_class`
look through such chains.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from ..analysis import Effect, HostRead, Kind, ModuleAnalysis, Value
from ..analysis import _tables as T
from ..analysis.base import (
    call_name,
    compares_with_text,
    keyword_arg,
    positional_args,
    strip_parens,
    visit,
)
from ..maybe_tensors import ARRAY_METHODS
from ._helpers import method_call, short

_ORDERING = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual,
             cst.Equal, cst.NotEqual)
_SCALAR_READS = ("item", "float", "int", "bool")

#: Tensor methods that reduce every element to one value when called without arguments.
_REDUCTIONS = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "prod", "std", "var", "norm", "median",
    "nanmedian", "nansum", "nanmean", "any", "all", "count_nonzero", "aminmax",
})
#: Methods and torch functions that keep the shape of their (first) tensor argument.
_SHAPE_KEEPING = frozenset({
    "abs", "neg", "negative", "sqrt", "rsqrt", "exp", "log", "log1p", "log2", "log10", "float",
    "double", "half", "bfloat16", "bool", "long", "int", "detach", "clone", "contiguous",
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "sigmoid", "tanh", "relu", "square",
    "reciprocal", "logical_not", "sign", "to", "cpu", "cuda", "clamp", "clip", "floor", "ceil",
    "round", "trunc", "frac", "sin", "cos", "nan_to_num", "pow", "expm1", "erf",
})
_F_SCALAR_LOSSES = frozenset({
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits", "poisson_nll_loss",
    "gaussian_nll_loss", "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss", "triplet_margin_loss",
    "multilabel_margin_loss", "ctc_loss",
})
_FLOAT_FACTORIES = frozenset({
    "torch.randn", "torch.rand", "torch.zeros", "torch.ones", "torch.empty", "torch.linspace",
    "torch.logspace", "torch.eye",
})
#: Methods whose result keeps the dtype of the receiver.
_DTYPE_KEEPING = frozenset({
    "abs", "neg", "negative", "max", "min", "amax", "amin", "detach", "clone", "contiguous",
    "view", "reshape", "flatten", "squeeze", "unsqueeze", "permute", "transpose", "t",
    "expand", "expand_as", "view_as", "reshape_as", "relu", "flip", "roll", "narrow",
    "median", "cpu", "cuda",
})
_TENSOR_READ_METHODS = frozenset({
    "item", "tolist", "numpy", "cpu", "__bool__", "__float__", "__int__", "__index__", "equal",
    "allclose", "is_nonzero", "nonzero", "unique", "masked_select",
})


@dataclass(frozen=True)
class Condition:
    """A test that reads the device, with its boolean tensor form when there is one."""

    test: cst.BaseExpression
    #: The same test as a boolean tensor (reads dropped), or None when nosync-fix cannot
    #: express it; :attr:`why_not` then says why.
    tensor: cst.BaseExpression | None
    why_not: str = ""
    #: The tensor form is proven to be a 0-dim tensor.
    scalar: bool = False
    #: Why the tensor form may not mean exactly what the test meant (empty: same meaning).
    unsafe_reasons: tuple[str, ...] = ()
    #: The host reads the tensor form drops.
    reads: tuple[HostRead, ...] = field(default=())
    #: For ``host and ... and device and ...`` (host conjuncts first): the host conjuncts,
    #: which can stay an ``if``, and the device conjuncts as a condition of their own.
    host_guard: cst.BaseExpression | None = None
    device_part: Condition | None = None
    #: Every tensor the test reads lives on the CPU (the test is in code torch.compile
    #: traces, where that still breaks the graph): nothing to wait for, and no fix.
    on_host: bool = False

    @property
    def all_reasons(self) -> tuple[str, ...]:
        """The unsafe reasons, including that the condition may not be one value."""
        if self.scalar:
            return self.unsafe_reasons
        return (*self.unsafe_reasons, "the condition is not known to be a single value: "
                "the original raises (or, after `.item()`, accepts a one-element tensor) "
                "where the tensor form broadcasts")


@dataclass(frozen=True)
class _Part:
    """A piece of a test: host, or device with its tensor form."""

    device: bool
    tensor: cst.BaseExpression | None = None
    why_not: str = ""
    scalar: bool = True
    reasons: tuple[str, ...] = ()
    reads: tuple[HostRead, ...] = ()


_HOST = _Part(device=False)


def device_condition(analysis: ModuleAnalysis, test: cst.BaseExpression) -> Condition | None:
    """The :class:`Condition` for ``test`` if evaluating it as a ``bool`` reads the device.

    None as well when every tensor it reads certainly lives on the CPU (tokenizer output,
    ``device="cpu"``, ``.cpu()`` results, ``torch.rand([])``): no device to wait for. But
    in ``forward`` or a compiled function such a test still breaks the graph: there it
    is a condition :attr:`~Condition.on_host`, without a tensor form (``torch.where``
    would meet a CPU condition with device values).

    Remembered per test: NSY101's chain and its judgement, NSY104 and the loop rules ask
    for the same tests."""
    known = analysis.memo("conditions.device_condition")
    if test not in known:
        known[test] = _device_condition(analysis, test)
    return known[test]  # type: ignore[return-value]


def _device_condition(analysis: ModuleAnalysis,
                      test: cst.BaseExpression) -> Condition | None:
    from ._host import host_only  # _host imports _scalars, which this module's users load

    translator = _Translator(analysis)
    part = translator.test(test)
    # Most tests read no device value; the translator says so for a fraction of what
    # host_only's search for CPU tensors costs (its reaching definitions), so it goes first.
    if not part.device:
        return None
    if host_only(analysis, test):
        if not analysis.hot.in_traced_function(test):
            return None
        return Condition(test=test, tensor=None, why_not="it tests a CPU tensor",
                         on_host=True)
    host_guard, device_part = (None, None) if part.tensor is not None else _split(
        analysis, translator, test)
    return Condition(test=test, tensor=part.tensor, why_not=part.why_not, scalar=part.scalar,
                     unsafe_reasons=tuple(dict.fromkeys(part.reasons)), reads=part.reads,
                     host_guard=host_guard, device_part=device_part)


def _conjuncts(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of a chain of ``and`` (``a and (b and c)`` too), left to right."""
    bare = strip_parens(expr)
    if isinstance(bare, cst.BooleanOperation) and isinstance(bare.operator, cst.And):
        return _conjuncts(bare.left) + _conjuncts(bare.right)
    return [expr]


def _joined(parts: list[cst.BaseExpression]) -> cst.BaseExpression:
    """``a and b and c`` of ``parts`` (one part: itself)."""
    result = parts[0]
    for part in parts[1:]:
        result = cst.BooleanOperation(result, cst.And(), part)
    return result


def _split(analysis: ModuleAnalysis, translator: _Translator,
           test: cst.BaseExpression) -> tuple[cst.BaseExpression | None, Condition | None]:
    """``host and device`` with every host conjunct before every device one: the host
    conjuncts, and the device conjuncts as their own condition. The original evaluates
    the device part only when the host part holds; an ``if`` on the host part around a
    select on the device part does the same."""
    conjuncts = _conjuncts(test)
    devices = [translator.test(c).device for c in conjuncts]
    if len(conjuncts) < 2 or devices[0] or not devices[-1]:
        return None, None
    first = devices.index(True)
    if not all(devices[first:]):
        return None, None
    host = [strip_parens(c) if isinstance(strip_parens(c), cst.Comparison) else c
            for c in conjuncts[:first]]
    device = device_condition(analysis, _joined(conjuncts[first:]))
    if device is None or device.tensor is None:
        return None, None
    return _joined(host), device


def proven_float(analysis: ModuleAnalysis, guard: cst.BaseExpression) -> frozenset[str]:
    """Code of the tensors a host guard proves to be floating point:
    ``x.dtype == torch.float16``, ``x.dtype in (torch.float16, torch.bfloat16)``,
    ``x.is_floating_point()``."""
    found: set[str] = set()
    for conjunct in _conjuncts(guard):
        bare = strip_parens(conjunct)
        if isinstance(bare, cst.Call) and isinstance(bare.func, cst.Attribute) and (
            bare.func.attr.value == "is_floating_point" and not bare.args
            and tensor_kind(analysis, bare.func.value) is Kind.TENSOR
        ):
            found.add(_code(bare.func.value))
        if not isinstance(bare, cst.Comparison) or len(bare.comparisons) != 1:
            continue
        target = bare.comparisons[0]
        left = strip_parens(bare.left)
        if not (isinstance(left, cst.Attribute) and left.attr.value == "dtype"):
            continue  # (whatever `x` is, a torch float dtype makes it a float tensor)
        right = strip_parens(target.comparator)
        if isinstance(target.operator, cst.Equal):
            dtypes = [right]
        elif isinstance(target.operator, cst.In) and isinstance(right, (cst.Tuple, cst.List,
                                                                         cst.Set)):
            dtypes = [e.value for e in right.elements]
        else:
            continue
        if dtypes and all(analysis.md.qualified_names(d) & _FLOAT_DTYPES for d in dtypes):
            found.add(_code(left.value))
    return frozenset(found)


_FLOAT_DTYPES = frozenset(f"torch.{d}" for d in (
    "float16", "half", "bfloat16", "float32", "float", "float64", "double"))


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(strip_parens(node))  # type: ignore[arg-type]


class _Translator:
    def __init__(self, analysis: ModuleAnalysis) -> None:
        self.analysis = analysis

    def test(self, expr: cst.BaseExpression) -> _Part:
        """``expr`` used as a truth value."""
        if isinstance(expr, cst.BooleanOperation):
            return self._boolean(expr)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            inner = self.test(expr.expression)
            if not inner.device or inner.tensor is None:
                return inner
            return _Part(True, cst.UnaryOperation(cst.BitInvert(), _operand(inner.tensor)),
                         scalar=inner.scalar, reasons=inner.reasons, reads=inner.reads)
        if isinstance(expr, cst.Comparison):
            return self._comparison(expr)
        read = self._read(expr)
        if read is not None:
            tensor, reasons = self._read_truth(read)
            return _Part(True, tensor, scalar=is_scalar(self.analysis, read.tensor),
                         reasons=reasons, reads=(read,))
        if tensor_kind(self.analysis, expr) is Kind.TENSOR:
            bare = strip_parens(expr) if not isinstance(expr, cst.NamedExpr) else expr
            tensor = bare if dtype_class(self.analysis, expr) == "bool" else method_call(
                bare, "bool")
            return _Part(True, tensor, scalar=is_scalar(self.analysis, expr))
        if self._contains_read(expr):
            return _Part(True, None, why_not=f"`{short(expr)}` reads the device inside a "
                                            "host expression")
        return self._presumed(expr)

    # -- pieces ----------------------------------------------------------------------------

    def _boolean(self, expr: cst.BooleanOperation) -> _Part:
        left, right = self.test(expr.left), self.test(expr.right)
        if not left.device and not right.device:
            return _HOST
        if not (left.device and right.device):
            return _Part(True, None, why_not="the condition mixes host and device values, and "
                                             f"`{_keyword(expr)}` may skip the device part")
        if left.tensor is None or right.tensor is None:
            return _Part(True, None, why_not=left.why_not or right.why_not)
        operator = cst.BitAnd() if isinstance(expr.operator, cst.And) else cst.BitOr()
        tensor = cst.BinaryOperation(_operand(left.tensor), operator, _operand(right.tensor))
        return _Part(True, tensor, scalar=left.scalar and right.scalar,
                     reasons=left.reasons + right.reasons, reads=left.reads + right.reads)

    def _comparison(self, expr: cst.Comparison) -> _Part:
        operators = [c.operator for c in expr.comparisons]
        sides = [expr.left] + [c.comparator for c in expr.comparisons]
        if compares_with_text(expr) or not all(isinstance(op, _ORDERING) for op in operators):
            if self._contains_read(expr):
                return _Part(True, None, why_not=f"`{short(expr)}` reads the device inside a "
                                                "host comparison")
            return _HOST
        parsed = [self._side(side) for side in sides]
        if not any(p.device for p in parsed):
            return _HOST
        if any(p.device and p.tensor is None for p in parsed):
            return _Part(True, None, why_not=next(p.why_not for p in parsed
                                                  if p.device and p.tensor is None))
        if len(operators) > 1:
            return _Part(True, None, why_not="chained comparisons are not rewritten")
        left, right = parsed
        reasons = list(left.reasons + right.reasons)
        reads = left.reads + right.reads
        if reads and not self._exact(parsed, sides):
            reasons.append("comparing on the device rounds the threshold to the tensor's dtype "
                           "(`t.item() > 0.1` compares in float64, `t > 0.1` in float32)")
        tensor = cst.Comparison(
            left=_comparison_operand(left.tensor if left.device else strip_parens(sides[0])),
            comparisons=[cst.ComparisonTarget(
                operator=_spaced(operators[0]),
                comparator=_comparison_operand(right.tensor if right.device
                                               else strip_parens(sides[1])))])
        scalar = all(p.scalar if p.device else self._host_scalar(s)
                     for p, s in zip(parsed, sides, strict=True))
        return _Part(True, tensor, scalar=scalar, reasons=tuple(reasons), reads=reads)

    def _side(self, side: cst.BaseExpression) -> _Part:
        """One side of a comparison: host, a tensor, or a read of one."""
        read = self._read(side)
        if read is not None:
            tensor, reasons = self._read_value(read)
            return _Part(True, tensor, scalar=is_scalar(self.analysis, read.tensor),
                         reasons=reasons, reads=(read,))
        if isinstance(side, cst.NamedExpr):
            if self._read(side.value) is not None:
                return _Part(True, None, why_not=f"`{short(side)}` binds a host value")
        if tensor_kind(self.analysis, side) is Kind.TENSOR:
            return _Part(True, side if isinstance(side, cst.NamedExpr) else strip_parens(side),
                         scalar=is_scalar(self.analysis, side))
        if self._contains_read(side):
            return _Part(True, None, why_not=f"`{short(side)}` computes on the host with a "
                                            "value read from the device")
        return self._presumed(side)

    def _presumed(self, expr: cst.BaseExpression) -> _Part:
        """A device part without a tensor form when ``expr`` reduces or transforms a
        parameter of ``forward`` or of a compiled function with tensor methods
        (``h.abs().max()``, ``mask.any()``, ``score`` bound to ``y.sum()``): what the
        model is called with is presumably a tensor, and then the test is a read (issue 18:
        such tests were silent). Not known, so reported without a fix."""
        parameter = presumed_parameter(self.analysis, expr)
        if parameter is None:
            return _HOST
        return _Part(True, None, why_not=presumed_reason(parameter))

    def _read(self, expr: cst.BaseExpression) -> HostRead | None:
        read = self.analysis.host_read(expr)
        if read is None or read.how not in _SCALAR_READS:
            return None
        return read

    def _read_value(self, read: HostRead) -> tuple[cst.BaseExpression, tuple[str, ...]]:
        """The tensor that stands for a read used as a number."""
        reasons = () if read.certain else (
            f"`{short(read.tensor)}` is probably, not certainly, a tensor",)
        tensor = strip_parens(read.tensor) if not isinstance(read.tensor, cst.NamedExpr) else (
            read.tensor)
        klass = dtype_class(self.analysis, read.tensor)
        if read.how == "int" and klass not in ("int", "bool"):
            return method_call(tensor, "long"), (*reasons, "`int()` raises on NaN and "
                                                 "infinity, `.long()` does not")
        if read.how == "bool" and klass != "bool":
            return method_call(tensor, "bool"), reasons
        return tensor, reasons

    def _read_truth(self, read: HostRead) -> tuple[cst.BaseExpression, tuple[str, ...]]:
        """The boolean tensor that stands for a read used as a truth value."""
        value, reasons = self._read_value(read)
        if dtype_class(self.analysis, read.tensor) == "bool" or read.how == "bool":
            return value, reasons
        return method_call(value, "bool"), reasons

    def _exact(self, parsed: list[_Part], sides: list[cst.BaseExpression]) -> bool:
        """Whether comparing on the device gives the host comparison's answer for every value."""
        left, right = parsed
        if left.reads and right.reads:
            classes = {dtype_class(self.analysis, r.tensor) for r in left.reads + right.reads}
            return len(classes) == 1 and classes <= {"float", "int", "bool"}
        read_part, other = (left, sides[1]) if left.reads else (right, sides[0])
        if read_part.reads[0].how == "bool":
            return True
        value = _number(other)
        return value is not None and _exact_everywhere(value)

    def _host_scalar(self, side: cst.BaseExpression) -> bool:
        """A host side of a comparison is one value when it is a number."""
        return _host_value(self.analysis, side)

    def _contains_read(self, expr: cst.BaseExpression) -> bool:
        finder = _ReadFinder(self)
        visit(expr, finder)
        return finder.found


class _ReadFinder(cst.CSTVisitor):
    def __init__(self, translator: _Translator) -> None:
        self.translator = translator
        self.found = False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        if self.translator._read(node) is not None:
            self.found = True
        return not self.found


# -- facts the analysis does not give directly ------------------------------------------------


def presumed_reason(parameter: str) -> str:
    """Why a test on a presumed tensor (:func:`presumed_parameter`) gets no fix."""
    return (f"`{parameter}` is a parameter of the model code, presumably a tensor but not "
            f"known to be one (annotate it, `{parameter}: torch.Tensor`, for a fix)")


#: Methods of a parameter that show it is an array, not a Python number or a flag (shared
#: with the pre-filter, which must keep every file where this module finds such a test).
_ARRAY_METHODS = ARRAY_METHODS


def presumed_parameter(analysis: ModuleAnalysis, expr: cst.BaseExpression,
                       evidence: bool = False, depth: int = 0) -> str | None:
    """The name of the parameter of ``forward`` (or of a compiled function) of unknown kind
    that ``expr`` computes from with array methods (``h.abs().max()``, ``x.sum()``, a name
    bound once to such a value); None otherwise. Such a parameter is presumably a tensor
    (:func:`is_model_argument`), and a test on the result then reads the device."""
    from ._scalars import is_model_argument, single_binding_value

    if depth > 6:
        return None
    expr = strip_parens(expr)
    if isinstance(expr, cst.Name):
        if analysis.kind(expr) is not Kind.UNKNOWN:
            return None
        if is_model_argument(analysis, expr):
            return expr.value if evidence else None
        value = single_binding_value(analysis, expr)
        return presumed_parameter(analysis, value, evidence, depth + 1) if value is not None \
            else None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and (
            expr.func.attr.value in _ARRAY_METHODS):
        return presumed_parameter(analysis, expr.func.value, True, depth + 1)
    if isinstance(expr, cst.BinaryOperation) and isinstance(
            expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
        return presumed_parameter(analysis, expr.left, evidence, depth + 1) or (
            presumed_parameter(analysis, expr.right, evidence, depth + 1))
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return presumed_parameter(analysis, expr.expression, evidence, depth + 1)
    return None


def tensor_kind(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> Kind:
    """``analysis.kind``, also seeing ``torch.isnan(x).any()`` and ``a.sum() > b.sum()``."""
    kind = analysis.kind(expr)
    if kind is not Kind.UNKNOWN:
        return kind
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and isinstance(
        strip_parens(expr.func.value), cst.Call
    ):
        method = expr.func.attr.value
        if tensor_kind(analysis, expr.func.value) is Kind.TENSOR:
            if method in T.TENSOR_HOST_METHODS or method in ("item", "size", "dim", "numel"):
                return Kind.HOST
            return Kind.TENSOR
    if isinstance(expr, cst.Comparison) and all(
        isinstance(c.operator, _ORDERING) for c in expr.comparisons
    ):
        sides = [expr.left] + [c.comparator for c in expr.comparisons]
        if any(tensor_kind(analysis, s) is Kind.TENSOR for s in sides):
            return Kind.TENSOR
    if isinstance(expr, cst.BinaryOperation) and Kind.TENSOR in (
        tensor_kind(analysis, expr.left), tensor_kind(analysis, expr.right)
    ):
        return Kind.TENSOR
    if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
        return tensor_kind(analysis, expr.expression)
    return kind


def expression_effect(analysis: ModuleAnalysis, expr: cst.CSTNode) -> Effect:
    """What evaluating ``expr`` may do besides computing its value.

    The analysis' effects, except that a method of a tensor produced by a call
    (``torch.isnan(x).any()``) is judged as a tensor method, and binding a name with
    ``:=`` counts (evaluating it unconditionally would bind the name on every path).
    """
    walker = _EffectWalker(analysis)
    visit(expr, walker)
    return walker.effect


class _EffectWalker(cst.CSTVisitor):
    def __init__(self, analysis: ModuleAnalysis) -> None:
        self.analysis = analysis
        self.effect = Effect.NONE

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.effect |= Effect.BINDING

    def visit_Yield(self, node: cst.Yield) -> None:
        self.effect |= Effect.CONTROL

    def visit_Await(self, node: cst.Await) -> None:
        self.effect |= Effect.CONTROL

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._truth(node.test)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._truth(node.left)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not):
            self._truth(node.expression)

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        if tensor_kind(self.analysis, node.expression) is Kind.TENSOR:
            self.effect |= Effect.READ

    def visit_Call(self, node: cst.Call) -> None:
        self.effect |= self._call(node)

    def _truth(self, test: cst.BaseExpression) -> None:
        if tensor_kind(self.analysis, test) is Kind.TENSOR:
            self.effect |= Effect.READ

    def _call(self, call: cst.Call) -> Effect:
        effect = self.analysis.effects.call_effect(call)
        func = call.func
        if Effect.CALL in effect and isinstance(func, cst.Attribute) and isinstance(
            strip_parens(func.value), cst.Call
        ) and tensor_kind(self.analysis, func.value) is Kind.TENSOR:
            method = func.attr.value
            if method in T.TENSOR_RNG_METHODS:
                return Effect.RNG
            if method in _TENSOR_READ_METHODS:
                return Effect.READ
            if method.endswith("_") and not method.endswith("__"):
                return Effect.INPLACE
            if method in ("backward", "register_hook", "retain_grad"):
                return Effect.CALL
            return effect & ~Effect.CALL
        return effect


def is_scalar(analysis: ModuleAnalysis, expr: cst.BaseExpression,
              _seen: frozenset[int] = frozenset()) -> bool:
    """Whether ``expr`` is proven to be a 0-dim tensor (or a host number).

    A name is one when every assignment gives one; meeting the same node again means a
    cycle through assignments (``loss = loss / 2`` in a loop), which keeps the property.
    """
    if _MET_SCALAR:
        _MET_SCALAR[-1].add(id(expr))
    if id(expr) in _seen:
        return True
    if isinstance(expr, cst.Name) and not _seen:
        key = (id(analysis.md.scope(expr)), expr.value)
        found = _per_name(analysis, "conditions.is_scalar", key, _MET_SCALAR, lambda: (
            _all_assigned(analysis, expr, lambda value: is_scalar(analysis, value))))
        if found is not None and id(expr) not in found[1]:
            return found[0]  # type: ignore[return-value]
    seen = _seen | {id(expr)}
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.NamedExpr):
        return is_scalar(analysis, expr.value, seen)
    if isinstance(expr, cst.UnaryOperation):
        return is_scalar(analysis, expr.expression, seen)
    if isinstance(expr, cst.BinaryOperation):
        return all(is_scalar(analysis, s, seen) or _host_value(analysis, s)
                   for s in (expr.left, expr.right))
    if isinstance(expr, cst.Comparison):
        sides = [expr.left] + [c.comparator for c in expr.comparisons]
        return all(is_scalar(analysis, s, seen) or _host_value(analysis, s) for s in sides)
    if isinstance(expr, cst.Name):
        return _all_assigned(analysis, expr, lambda value: is_scalar(analysis, value, seen))
    if isinstance(expr, cst.Call):
        return _scalar_call(analysis, expr, seen)
    return False


def _host_value(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """A host number, string or configuration value: not a tensor, array or container,
    so it cannot broadcast a 0-dim tensor to more dimensions."""
    return _number(expr) is not None or analysis.tensors.value(expr) is Value.HOST


def _scalar_call(analysis: ModuleAnalysis, call: cst.Call, seen: frozenset[int]) -> bool:
    func = call.func
    if isinstance(func, cst.Attribute) and tensor_kind(analysis, func.value) is Kind.TENSOR:
        method = func.attr.value
        if method in _REDUCTIONS and not call.args:
            return True
        if method in _SHAPE_KEEPING and all(
            _host_value(analysis, a.value)
            for a in call.args
        ):
            return is_scalar(analysis, func.value, seen)
        return False
    for q in _qualified_torch(analysis, call):
        last = q.rsplit(".", 1)[-1]
        args = positional_args(call)
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        if q in ("torch.tensor", "torch.as_tensor", "torch.scalar_tensor") and args and (
            _number(args[0]) is not None
        ):
            return True
        if q in ("torch.linalg.vector_norm", "torch.linalg.norm", "torch.norm",
                 "torch.dist") or (q.startswith("torch.") and q.count(".") == 1
                                   and last in _REDUCTIONS):
            limit = 2 if q == "torch.dist" else 1
            return len(args) == limit and not (keywords - {"dtype", "p", "ord"})
        if q.startswith("torch.nn.functional.") and (last in _F_SCALAR_LOSSES
                                                       or last.endswith("_loss")):
            reduction = keyword_arg(call, "reduction")
            return reduction is None or (isinstance(reduction, cst.SimpleString) and (
                reduction.evaluated_value in ("mean", "sum")))
        if q.startswith("torch.") and q.count(".") == 1 and last in _SHAPE_KEEPING and args:
            return is_scalar(analysis, args[0], seen) and all(
                _host_value(analysis, a) for a in args[1:])
    return False


def _qualified_torch(analysis: ModuleAnalysis, call: cst.Call) -> list[str]:
    """The torch qualified names of a call's function, ignoring LibCST's names for
    methods of call results (``torch.isnan.any`` for ``torch.isnan(x).any``)."""
    func = call.func
    if isinstance(func, cst.Attribute) and not isinstance(func.value, (cst.Name, cst.Attribute)):
        return []
    return sorted(q for q in analysis.md.qualified_names(func) if q.startswith("torch."))


def dtype_class(analysis: ModuleAnalysis, expr: cst.BaseExpression,
                _seen: frozenset[int] = frozenset(),
                _assumed: tuple[tuple[tuple[int, str], str], ...] = ()) -> str | None:
    """"bool", "int" or "float" when the dtype family of a tensor expression is certain.

    The analysis' answer, extended to names (every assignment agrees), float factories
    without ``dtype=``, ``torch.tensor`` of literals, arithmetic and dtype-keeping methods.
    A name updated from itself (``h = torch.randn(8)`` then ``h = h.clamp(-1e3, 1e3)`` in a
    loop) has the family of its other assignments when, assuming it, every update keeps it.
    """
    if _MET_CLASS:
        _MET_CLASS[-1].add(id(expr))
    key = (id(analysis.md.scope(expr)), expr.value) if isinstance(expr, cst.Name) else None
    if key is not None and key in dict(_assumed):
        return dict(_assumed)[key]
    if id(expr) in _seen:
        return None
    if isinstance(expr, cst.Name):
        if not _seen and not _assumed:
            found = _per_name(analysis, "conditions.dtype_class", key, _MET_CLASS,
                              lambda: _name_class(analysis, expr, frozenset(), (), key))
            if found is not None and id(expr) not in found[1]:
                return found[0]  # type: ignore[return-value]
        return _name_class(analysis, expr, _seen | {id(expr)}, _assumed, key)
    seen = _seen | {id(expr)}
    if isinstance(expr, cst.NamedExpr):
        return dtype_class(analysis, expr.value, seen, _assumed)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return dtype_class(analysis, expr.expression, seen, _assumed)
    if isinstance(expr, cst.BinaryOperation) and isinstance(
        expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)
    ):
        sides = [dtype_class(analysis, s, seen, _assumed) if analysis.kind(s) is not Kind.HOST
                 else _literal_class(s) for s in (expr.left, expr.right)]
        if isinstance(expr.operator, cst.Divide) and all(s is not None for s in sides):
            return "float"
        if _literal_class(expr.left) == "float" or _literal_class(expr.right) == "float":
            return "float"  # a float number makes any real tensor a float one
        if "float" in sides and None not in sides:
            return "float"
        if sides == ["int", "int"]:
            return "int"
        return None
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and tensor_kind(analysis, func.value) is Kind.TENSOR:
            method = func.attr.value
            if method in ("any", "all", "isnan", "isinf", "isfinite", "logical_not"):
                return "bool"
            if method in _DTYPE_KEEPING and (method not in ("max", "min") or not expr.args):
                return dtype_class(analysis, func.value, seen, _assumed)
            if method in ("sum", "prod") and not expr.args:
                inner = dtype_class(analysis, func.value, seen, _assumed)
                return "int" if inner in ("int", "bool") else inner
            if method in ("clamp", "clip"):
                inner = dtype_class(analysis, func.value, seen, _assumed)
                bounds = {_literal_class(a.value) for a in expr.args}
                if inner == "float" or (inner == "int" and bounds <= {"int"}):
                    return inner
                return None
        if _float_layer_call(analysis, expr):
            return "float"
        for q in _qualified_torch(analysis, expr):
            if q in _FLOAT_FACTORIES and keyword_arg(expr, "dtype") is None:
                return "float"
            if q in ("torch.tensor", "torch.as_tensor") and keyword_arg(expr, "dtype") is None:
                args = positional_args(expr)
                return _literal_class(args[0]) if args else None
            if q in ("torch.zeros_like", "torch.ones_like", "torch.full_like",
                     "torch.empty_like", "torch.clone") and keyword_arg(expr, "dtype") is None:
                args = positional_args(expr)
                return dtype_class(analysis, args[0], seen, _assumed) if args else None
    return analysis.tensors.dtype_class(expr)


#: Layers whose output is floating point: their weights are, and `Module.to` only takes
#: floating or complex dtypes (a complex conversion is not seen; clamp would raise on it).
_FLOAT_LAYERS = frozenset(f"torch.nn.{name}" for name in (
    "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d",
    "BatchNorm2d", "BatchNorm3d", "Embedding", "EmbeddingBag",
))


def _float_layer_call(analysis: ModuleAnalysis, call: cst.Call) -> bool:
    """``self.proj(x)`` where every assignment to ``self.proj`` makes one of
    :data:`_FLOAT_LAYERS` without ``dtype=``: a floating-point tensor (issue 18, form f)."""
    if not isinstance(call.func, cst.Attribute):
        return False
    values = analysis.tensors.self_attribute_values(call.func)
    return bool(values) and all(
        isinstance(v, cst.Call) and keyword_arg(v, "dtype") is None
        and bool(analysis.md.qualified_names(v.func) & _FLOAT_LAYERS) for v in values)


def _name_class(analysis: ModuleAnalysis, expr: cst.Name, seen: frozenset[int],
                _assumed: tuple[tuple[tuple[int, str], str], ...],
                key: tuple[int, str] | None) -> str | None:
    """:func:`dtype_class` of a name: its assignments' families agree."""
    classes: set[str | None] = set()
    ok = _all_assigned(analysis, expr,
                       lambda v: classes.add(dtype_class(analysis, v, seen, _assumed))
                       or True)
    if ok and len(classes) == 1:
        return classes.pop()
    known = classes - {None}
    if not ok or len(known) != 1:
        return None
    family = known.pop()
    again: set[str | None] = set()
    hypothesis = (*_assumed, (key, family))
    ok = _all_assigned(analysis, expr,
                       lambda v: again.add(dtype_class(analysis, v, seen, hypothesis))
                       or True)
    return family if ok and again == {family} else None


#: The nodes met (asked about) while :func:`_per_name` computes a name's answer, one set
#: per answer being computed, for :func:`dtype_class` and :func:`is_scalar`.
_MET_CLASS: list[set[int]] = []
_MET_SCALAR: list[set[int]] = []
_COMPUTING = object()


def _per_name(analysis: ModuleAnalysis, memo: str, key: tuple[int, str] | None,
              met_stack: list[set[int]], compute: Callable[[], object]
              ) -> tuple[object, frozenset[int]] | None:
    """The answer of :func:`dtype_class` or :func:`is_scalar` for a name asked afresh (not
    while following a cycle), computed once per scope and name instead of once per use:
    both looked at every assignment of the name for each use, quadratic in a function
    that binds a name again and again.

    The answer is computed as if asked from no node at all, and comes with every node the
    computation asked about: those are the only nodes whose identity it compares with
    the nodes already on its path (the cycle check). For a use that is not among them
    the answer is exactly the one asked from that use; a use among them (``x`` in
    ``x = x + 1``) is asked afresh by the caller, as is a name met again while its own
    answer is being computed (None).
    """
    known = analysis.memo(memo)
    entry = known.get(key)
    if entry is _COMPUTING:
        return None  # a name bound to itself through others (x = y; y = x): ask afresh
    if entry is None:
        known[key] = _COMPUTING
        met_stack.append(set())
        try:
            answer = compute()
        except BaseException:
            del known[key]
            raise
        finally:
            met = frozenset(met_stack.pop())
        entry = known[key] = (answer, met)
    if met_stack:
        met_stack[-1].update(entry[1])  # type: ignore[index]
    return entry  # type: ignore[return-value]


def _literal_class(expr: cst.BaseExpression) -> str | None:
    """The dtype family a literal (or a list of literals) gives ``torch.tensor``."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        classes = {_literal_class(e.value) for e in expr.elements}
        if None in classes or not classes:
            return None
        return "float" if "float" in classes else classes.pop() if len(classes) == 1 else None
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return "bool"
    value = _number(expr)
    if value is None:
        return None
    return "float" if isinstance(value, float) else "int"


def _all_assigned(analysis: ModuleAnalysis, name: cst.Name, check) -> bool:  # type: ignore
    """Whether every assignment of ``name`` in its scope is ``name = v`` with ``check(v)``."""
    scope = analysis.md.scope(name)
    if scope is None:
        return False
    assignments = list(scope.assignments[name.value])
    if not assignments:
        return False
    for assignment in assignments:
        node = getattr(assignment, "node", None)
        if not isinstance(node, cst.Name):
            return False
        parent = analysis.md.parent(node)
        if not isinstance(parent, cst.AssignTarget):
            return False
        statement = analysis.md.parent(parent)
        if not isinstance(statement, cst.Assign) or not check(statement.value):
            return False
    return True


# -- numbers -----------------------------------------------------------------------------------


def _number(expr: cst.BaseExpression) -> int | float | None:
    """The value of a number literal, with an optional sign."""
    sign = 1
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        sign = -1 if isinstance(expr.operator, cst.Minus) else 1
        expr = expr.expression
    if isinstance(expr, cst.Integer):
        return sign * int(expr.evaluated_value)
    if isinstance(expr, cst.Float):
        return sign * float(expr.evaluated_value)
    return None


def _exact_everywhere(value: int | float) -> bool:
    """Whether comparing any tensor with ``value`` on the device matches the host comparison.

    The device compares in the tensor's dtype: the threshold must be exact in float16 and
    bfloat16 (so in every float dtype), and small enough for every integer dtype (torch
    wraps out-of-range thresholds for uint8 and int8).
    """
    if not 0 <= value <= 127 or (isinstance(value, float) and not math.isfinite(value)):
        return False
    as_half = struct.unpack("<e", struct.pack("<e", value))[0]
    as_single = struct.unpack("<f", struct.pack("<f", value))[0]
    bfloat16_exact = struct.unpack("<I", struct.pack("<f", value))[0] & 0xFFFF == 0
    return as_half == value and as_single == value and bfloat16_exact


# -- building code -----------------------------------------------------------------------------


def _operand(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` parenthesized for use as an operand of ``&``, ``|`` or ``~``."""
    if expr.lpar or isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _comparison_operand(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` parenthesized where it binds more loosely than a comparison."""
    loose = (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr, cst.Comparison)
    if expr.lpar or not (isinstance(expr, loose) or (
        isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not)
    )):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _spaced(operator: cst.BaseCompOp) -> cst.BaseCompOp:
    space = cst.SimpleWhitespace(" ")
    return operator.with_changes(whitespace_before=space, whitespace_after=space)


def _keyword(expr: cst.BooleanOperation) -> str:
    return "and" if isinstance(expr.operator, cst.And) else "or"


def mentions_nan_check(test: cst.BaseExpression) -> bool:
    """Whether a test checks for NaN or infinity (``isnan``, ``isfinite``, ``x != x`` ...)."""
    finder = _NanCheckFinder()
    visit(test, finder)
    return finder.found


class _NanCheckFinder(cst.CSTVisitor):
    _NAMES = frozenset({"isnan", "isinf", "isfinite", "isposinf", "isneginf"})

    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) in self._NAMES:
            self.found = True

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, cst.NotEqual):
            left, right = node.left, node.comparisons[0].comparator
            if cst.Module([]).code_for_node(left) == cst.Module([]).code_for_node(right):
                self.found = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("nan", "inf"):
            self.found = True
