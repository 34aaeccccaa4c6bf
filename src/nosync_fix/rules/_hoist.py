"""Hoisted reads: a name that now holds a device tensor becomes a Python number once,
where the host needs it.

When a rule keeps a running value on the device (a sum, a best-so-far, a list of
tensors), every place where that value reaches host code must get the Python
object the original program had there. :func:`host_uses` finds those places for
a name updated inside a loop: after the loop, or just before a read inside a
block that runs only on some steps (``if step % 100 == 0: print(total)``). It
refuses (returning the reason) when the name is read on every step, read in
the same block that updates it, used by a nested function, or read in the
loop's header or ``else:``. :func:`conversion_statement` writes the statement that
converts the value back, with the type the original had.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata.scope_provider import Scope

from ..analysis import HostRead, ModuleAnalysis
from ..analysis.base import Metadata
from ..rewrite import Rewrite
from ._helpers import statement, torch_ref

Loop = cst.For | cst.While


@dataclass
class HostUses:
    """Where a loop-updated device value must be converted back for the host."""

    #: Statements inside the loop, on conditional paths, that read the value.
    before: list[cst.BaseStatement] = field(default_factory=list)
    #: The value is read after the loop (or on the next turn of an enclosing loop).
    after_loop: bool = False


def host_uses(md: Metadata, name: str, scope: Scope, loop: Loop,
              device_statements: Sequence[cst.CSTNode]) -> HostUses | str:
    """Where ``name`` reaches host code, given that ``device_statements`` keep it on the device.

    Returns the reason as a string when no faithful placement exists.
    """
    uses = HostUses()
    references = {id(r): r for a in scope.assignments[name] for r in a.references}
    for access in references.values():
        use = access.node
        if access.scope is not scope:
            return f"`{name}` is used in a nested function"
        if any(holder is use or md.is_ancestor(holder, use) for holder in device_statements):
            continue
        if md.is_ancestor(loop.body, use):
            where = _conditional_statement(md, use, loop)
            if where is None:
                return f"`{name}` is read on every step"
            if any(_same_region(md, where, holder, loop) for holder in device_statements):
                return f"`{name}` is read and updated in the same block"
            if not any(s is where for s in uses.before):
                uses.before.append(where)
        elif md.is_ancestor(loop, use):
            return f"`{name}` is read in the loop header or `else:`"
        else:
            uses.after_loop = True
    return uses


def add_conversions(rewrite: Rewrite, uses: HostUses, loop: Loop, conversion: str) -> Rewrite:
    """Insert ``conversion`` before each conditional read and after the loop, as needed."""
    for where in uses.before:
        rewrite = rewrite.insert_before(where, [statement(conversion)])
    if uses.after_loop:
        rewrite = rewrite.insert_after(loop, [statement(conversion)])
    return rewrite


def conversion_statement(analysis: ModuleAnalysis, name: str,
                         host_values: Sequence[cst.BaseExpression], reads: Sequence[HostRead],
                         rewrite: Rewrite) -> tuple[str, Rewrite]:
    """The statement that turns ``name`` back into the Python number the original had.

    ``host_values`` are the values the name is given on the host (its initial value and
    resets); ``reads`` are the reads now replaced by tensors. A name that always starts
    as a float becomes ``float(name)``; an integer count of integer reads ``int(name)``;
    otherwise ``.item()`` (or ``float()``), guarded so that a loop that ran zero times
    leaves the initial value as it was.
    """
    types = [numeric_type(v) for v in host_values]
    if types and all(t == "float" for t in types):
        return f"{name} = float({name})", rewrite
    integer_reads = all(
        r.how == "int" or (r.how == "item" and analysis.tensors.dtype_class(r.tensor)
                           in ("int", "bool"))
        for r in reads)
    if types and all(t == "int" for t in types) and integer_reads:
        return f"{name} = int({name})", rewrite
    torch, rewrite = torch_ref(analysis, rewrite)
    convert = f"float({name})" if any(r.how == "float" for r in reads) else f"{name}.item()"
    return f"{name} = {convert} if isinstance({name}, {torch}.Tensor) else {name}", rewrite


def numeric_type(value: cst.BaseExpression) -> str | None:
    """"float" or "int" for number literals, ``float("inf")`` and ``math.inf``; else None."""
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, (cst.Minus,
                                                                             cst.Plus)):
        value = value.expression
    if isinstance(value, cst.Float):
        return "float"
    if isinstance(value, cst.Integer):
        return "int"
    if (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
            and value.func.value == "float" and len(value.args) == 1
            and isinstance(value.args[0].value, cst.SimpleString)
            and str(value.args[0].value.evaluated_value).strip().lower().lstrip("+-")
            in ("inf", "infinity", "nan")):
        return "float"
    if (isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name)
            and value.value.value in ("math", "np", "numpy") and value.attr.value in ("inf",
                                                                                      "nan")):
        return "float"
    return None


def is_conversion(value: cst.BaseExpression, name: str) -> bool:
    """Whether ``value`` is a conversion this module writes: ``float(x)``, ``int(x)``, or
    ``x.item() if isinstance(x, torch.Tensor) else x`` (so that re-runs recognise it)."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and (
        value.func.value in ("float", "int") and len(value.args) == 1
        and isinstance(value.args[0].value, cst.Name) and value.args[0].value.value == name
    ):
        return True
    if isinstance(value, cst.IfExp) and isinstance(value.orelse, cst.Name) and (
        value.orelse.value == name
    ):
        test = value.test
        return (isinstance(test, cst.Call) and isinstance(test.func, cst.Name)
                and test.func.value == "isinstance")
    return False


def binding_statement(md: Metadata, target: cst.Name) -> cst.CSTNode | None:
    """The Assign/AugAssign/AnnAssign that binds ``target`` alone, or None."""
    parent = md.parent(target)
    if isinstance(parent, cst.AssignTarget):
        assign = md.parent(parent)
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
            return assign
        return None
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign)):
        return parent
    return None


def _conditional_statement(md: Metadata, use: cst.CSTNode, loop: Loop) -> cst.BaseStatement | None:
    """The statement before which to convert, when ``use`` runs only on some steps."""
    where = md.statement_of(use)
    if where is None:
        return None
    for ancestor in md.ancestors(where):
        if ancestor is loop:
            return None
        if isinstance(ancestor, (cst.If, cst.Else)) and md.is_ancestor(loop, ancestor):
            return where
    return None


def _same_region(md: Metadata, where: cst.CSTNode, holder: cst.CSTNode, loop: Loop) -> bool:
    """Whether ``holder`` is inside the same conditional block as ``where``."""
    block = md.parent(where)
    return block is not None and block is not loop.body and md.is_ancestor(block, holder)
