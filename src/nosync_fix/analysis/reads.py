"""Host reads: the expressions that copy a device value into a Python object."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata.scope_provider import Assignment

from .base import Metadata, keyword_arg
from .tensors import Kind, TensorFacts

#: How a read converts: ``t.item()``, ``float(t)``, ``int(t)``, ``bool(t)``, ``t.tolist()``.
READ_METHODS = ("item", "tolist")
READ_BUILTINS = ("float", "int", "bool")
#: Tensor methods that may put their result on another device.
_MOVING_METHODS = frozenset({"to", "cuda", "xpu", "mps", "npu", "hpu", "ipu"})


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
        if on_host(md, receiver):
            return None
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
        if facts.kind(argument) is Kind.TENSOR and not on_host(md, argument):
            return HostRead(node, argument, func.value, True)
    return None


def on_host(md: Metadata, tensor: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether tensor ``tensor`` certainly lives in host memory, so reading it waits for
    nothing: the result of ``.cpu()`` or ``.to("cpu")``, a torch function called with
    ``device="cpu"``, or a name only ever bound to one of those. (The ``.cpu()`` copy
    itself waits: NSY903 reports it.)"""
    if depth > 3:
        return False
    if isinstance(tensor, cst.Name):
        access = md.access(tensor)
        referents = list(access.referents) if access is not None else []
        return bool(referents) and all(
            _bound_on_host(md, referent, depth) for referent in referents)
    if isinstance(tensor, cst.Subscript):
        return on_host(md, tensor.value, depth)
    if not isinstance(tensor, cst.Call):
        return False
    func = tensor.func
    if isinstance(func, cst.Attribute) and func.attr.value == "cpu" and not tensor.args:
        return True
    if isinstance(func, cst.Attribute) and func.attr.value not in _MOVING_METHODS and (
            keyword_arg(tensor, "device") is None and on_host(md, func.value, depth)):
        return True  # `scores.sum()` of a host tensor stays on the host
    device = keyword_arg(tensor, "device")
    if device is None and isinstance(func, cst.Attribute) and func.attr.value == "to" and (
            tensor.args and tensor.args[0].keyword is None):
        device = tensor.args[0].value
    if device is None:
        return False
    if isinstance(func, cst.Attribute) and func.attr.value == "to" or any(
            q.startswith("torch.") for q in md.qualified_names(func)):
        return _is_cpu_device(md, device)
    return False


def _is_cpu_device(md: Metadata, device: cst.BaseExpression) -> bool:
    if isinstance(device, cst.SimpleString):
        return device.evaluated_value == "cpu"
    if isinstance(device, cst.Call) and md.qualified_names(device.func) & {"torch.device"}:
        args = device.args
        return len(args) == 1 and isinstance(args[0].value, cst.SimpleString) and (
            args[0].value.evaluated_value == "cpu")
    return False


def _bound_on_host(md: Metadata, referent: object, depth: int) -> bool:
    if not isinstance(referent, Assignment) or not isinstance(referent.node, cst.Name):
        return False
    target = md.parent(referent.node)
    if not isinstance(target, cst.AssignTarget):
        return False
    assign = md.parent(target)
    return isinstance(assign, cst.Assign) and on_host(md, assign.value, depth + 1)
