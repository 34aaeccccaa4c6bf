"""Host reads: the expressions that copy a device value into a Python object."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .base import Metadata
from .tensors import Kind, TensorFacts

#: How a read converts: ``t.item()``, ``float(t)``, ``int(t)``, ``bool(t)``, ``t.tolist()``.
READ_METHODS = ("item", "tolist")
READ_BUILTINS = ("float", "int", "bool")


@dataclass(frozen=True)
class HostRead:
    """One read of a device value into a Python object."""

    node: cst.Call
    #: The tensor expression that is read.
    tensor: cst.BaseExpression
    #: "item", "tolist", "float", "int" or "bool".
    how: str
    #: True when the receiver is known to be a tensor; False when it is only
    #: plausibly one (an UNKNOWN receiver in a torch module without numpy):
    #: fixes built on such a read must be unsafe.
    certain: bool


def host_read(md: Metadata, facts: TensorFacts, node: cst.CSTNode) -> HostRead | None:
    """The :class:`HostRead` that ``node`` is, or None."""
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value in READ_METHODS and not node.args:
        receiver = func.value
        kind = facts.kind(receiver)
        if kind is Kind.TENSOR:
            return HostRead(node, receiver, func.attr.value, True)
        if kind is Kind.UNKNOWN and facts.unknown_read_rewritable(receiver):
            return HostRead(node, receiver, func.attr.value, False)
        return None
    if isinstance(func, cst.Name) and func.value in READ_BUILTINS:
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return None
        if not md.qualified_names(func) & {f"builtins.{func.value}"}:
            return None
        argument = node.args[0].value
        if facts.kind(argument) is Kind.TENSOR:
            return HostRead(node, argument, func.value, True)
    return None
