"""Small builders shared by rules: new expressions that read well and parse right."""

from __future__ import annotations

import libcst as cst

from ..analysis import ModuleAnalysis
from ..analysis.reads import HostRead
from ..rewrite import Rewrite

_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float,
           cst.SimpleString, cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp,
           cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.ConcatenatedString,
           cst.FormattedString)


def parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` wrapped in parentheses unless it binds tighter than attribute access."""
    if expr.lpar or isinstance(expr, _ATOMIC):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def method_call(receiver: cst.BaseExpression, method: str,
                *args: cst.BaseExpression) -> cst.Call:
    """``receiver.method(args...)`` with parentheses around the receiver where needed."""
    return cst.Call(
        func=cst.Attribute(value=parenthesized(receiver), attr=cst.Name(method)),
        args=[cst.Arg(a) for a in args],
    )


def is_detach_call(expr: cst.BaseExpression) -> bool:
    return (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "detach" and not expr.args)


def detached(tensor: cst.BaseExpression) -> cst.BaseExpression:
    """``tensor.detach()``, without doubling an existing ``.detach()``."""
    if is_detach_call(tensor):
        return tensor
    return method_call(tensor, "detach")


def torch_ref(analysis: ModuleAnalysis, rewrite: Rewrite) -> tuple[str, Rewrite]:
    """The name to spell ``torch`` with here, and the rewrite with the import it needs."""
    name = analysis.torch_name()
    if name is not None:
        return name, rewrite
    return "torch", rewrite.needs_import("torch")


def expression(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def statement(code: str) -> cst.BaseStatement:
    return cst.parse_statement(code)


def read_as_tensor(read: HostRead, analysis: ModuleAnalysis,
                   float64: bool = False) -> cst.BaseExpression:
    """The device-side stand-in for a scalar read, keeping the read's numeric meaning.

    ``t.item()`` and ``float(t)`` become ``t.detach()``; ``int(t)`` of a tensor
    that may hold fractions becomes ``t.detach().long()`` (``int`` truncates
    towards zero, and so does ``.long()``); with ``float64`` floating reads are
    widened with ``.double()``.
    """
    tensor = detached(read.tensor)
    dtype = analysis.tensors.dtype_class(read.tensor)
    if read.how == "int" and dtype not in ("int", "bool"):
        return method_call(tensor, "long")
    if float64 and read.how in ("item", "float") and dtype not in ("int", "bool"):
        return method_call(tensor, "double")
    if read.how == "float" and dtype in ("int", "bool") and float64:
        return method_call(tensor, "double")
    return tensor


def code_of(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def short(node: cst.CSTNode, limit: int = 60) -> str:
    """The code of a node on one line, shortened for messages."""
    text = " ".join(code_of(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
