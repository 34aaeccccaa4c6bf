"""Where a tensor lives: copies to the host, and values certainly on the host.

Shared by the rules that must not call a read of a CPU tensor a sync (NSY202,
NSY301) and by NSY903, which reports the copies themselves.
"""

from __future__ import annotations

import libcst as cst

from ..analysis import Kind, ModuleAnalysis, Value
from ..analysis import _tables as T
from ..analysis.base import call_name, keyword_arg, positional_args
from ._scalars import single_binding_value

_CPU_FACTORIES = frozenset({
    "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.tensor", "torch.arange",
    "torch.linspace", "torch.logspace", "torch.eye",
})


def host_transfer(analysis: ModuleAnalysis, node: cst.CSTNode) -> str | None:
    """"cpu", "numpy", "tolist" or "to" when ``node`` copies a tensor to the host.

    Only the first transfer of a chain counts: in ``t.cpu().numpy()`` it is ``.cpu()``.
    """
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    method = call_name(node)
    receiver = node.func.value
    if method in ("cpu", "tolist") and not node.args:
        pass
    elif method == "numpy" and not positional_args(node):
        pass
    elif method == "to" and _moves_to_cpu(analysis, node):
        pass
    else:
        return None
    if analysis.kind(receiver) is not Kind.TENSOR or _has_transfer(analysis, receiver):
        return None
    if _made_on_host(analysis, receiver, 0):
        return None  # torch.linspace(...).tolist(): a CPU tensor, nothing to wait for
    return method


def certainly_on_host(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is certainly a CPU tensor (or numpy array): reading it waits for
    no device. See :func:`_made_on_host`."""
    return _made_on_host(analysis, expr, 0)


def _made_on_host(analysis: ModuleAnalysis, expr: cst.BaseExpression, depth: int) -> bool:
    """Whether ``expr`` is certainly a CPU tensor made here: a torch factory without a
    device (or with ``device="cpu"``), a copy to the host (``.cpu()``, ``.to("cpu")``,
    ``.numpy()``), and what is cut from it, iterated (also ``reversed``) or converted."""
    if depth > 8:
        return False
    if isinstance(expr, cst.Name):
        value = single_binding_value(analysis, expr)
        if value is None:
            value = _iterated(analysis, expr)
        return value is not None and _made_on_host(analysis, value, depth + 1)
    if isinstance(expr, cst.Subscript):
        return _made_on_host(analysis, expr.value, depth + 1)
    if not isinstance(expr, cst.Call):
        return False
    qualified = analysis.md.qualified_names(expr.func)
    if qualified & _CPU_FACTORIES:
        device = keyword_arg(expr, "device")
        return device is None or _is_cpu(analysis, device)
    if "builtins.reversed" in qualified and len(expr.args) == 1:
        return _made_on_host(analysis, expr.args[0].value, depth + 1)
    if isinstance(expr.func, cst.Attribute) and (
        call_name(expr) in ("cpu", "numpy") and not expr.args
        or call_name(expr) == "to" and _moves_to_cpu(analysis, expr)
    ):
        return True
    if isinstance(expr.func, cst.Attribute) and call_name(expr) in T.SAME_DEVICE_METHODS:
        return _made_on_host(analysis, expr.func.value, depth + 1)
    return False


def _iterated(analysis: ModuleAnalysis, name: cst.Name) -> cst.BaseExpression | None:
    """The iterable of the only ``for`` (or comprehension) that binds ``name``."""
    access = analysis.md.access(name)
    if access is None or access.scope is None:
        return None
    assignments = list(access.scope.assignments[name.value])
    if len(assignments) != 1:
        return None
    holder = analysis.md.parent(assignments[0].node)
    if isinstance(holder, (cst.For, cst.CompFor)) and holder.target is assignments[0].node:
        return holder.iter
    return None


def _moves_to_cpu(analysis: ModuleAnalysis, call: cst.Call) -> bool:
    device = keyword_arg(call, "device")
    candidates = ([device] if device is not None else []) + positional_args(call)[:1]
    return any(_is_cpu(analysis, c) for c in candidates)


def _is_cpu(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value == "cpu"
    if isinstance(expr, cst.Call) and analysis.md.qualified_names(expr.func) & {"torch.device"}:
        args = positional_args(expr)
        return len(args) == 1 and _is_cpu(analysis, args[0])
    return False


def _has_transfer(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is already on the host: a transfer in its chain, or a name bound
    once to one (``image = t.cpu()``, then ``image.numpy()``)."""
    while True:
        if isinstance(expr, cst.Name):
            value = single_binding_value(analysis, expr)
            if value is None:
                return False
            expr = value
        elif isinstance(expr, cst.Call):
            if host_transfer(analysis, expr) is not None:
                return True
            if not isinstance(expr.func, cst.Attribute):
                return False
            expr = expr.func.value
        elif isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        else:
            return False


def is_host_buffer(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """A CPU tensor or a numpy array: ``torch.zeros(n)`` without a device, ``x.cpu()``,
    ``np.zeros(n)``, bound once to a name."""
    if not isinstance(expr, cst.Name):
        return False
    if analysis.tensors.value(expr) is Value.ARRAY:
        return True
    value = single_binding_value(analysis, expr)
    if not isinstance(value, cst.Call):
        return False
    if call_name(value) == "cpu" or (call_name(value) == "to" and _moves_to_cpu(analysis,
                                                                              value)):
        return True
    return _made_on_host(analysis, value, 0)
