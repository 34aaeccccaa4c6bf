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
from libcst.metadata.scope_provider import ComprehensionScope, Scope

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
    for access in sorted(references.values(), key=lambda r: md.source_order(r.node)):
        use = access.node
        if access.scope is not scope and not runs_inline(access.scope, scope):
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
    exposed = exception_exposure(md, name, [r.node for r in references.values()], loop)
    if exposed is not None:
        return exposed
    uses.before = [w for w in uses.before
                   if not any(other is not w and _dominates(md, other, w) for other in uses.before)]
    return uses


def _dominates(md: Metadata, first: cst.CSTNode, later: cst.CSTNode) -> bool:
    """Whether ``first`` always runs before ``later`` in the same turn: it is an earlier
    statement of a block that holds ``later``."""
    block = md.parent(first)
    if not isinstance(block, cst.IndentedBlock):
        return False
    body = list(block.body)
    current: cst.CSTNode | None = later
    while current is not None and md.parent(current) is not block:
        current = md.parent(current)
    return current is not None and body.index(first) < body.index(current)


def exception_exposure(md: Metadata, name: str, uses: Sequence[cst.CSTNode],
                       loop: Loop) -> str | None:
    """Why an exception leaving ``loop`` could show ``name`` unconverted to host code, or None.

    The conversion after the loop does not run when the loop raises. That matters when
    the exception is caught around the loop (``except KeyboardInterrupt:``, a
    ``contextlib.suppress``) and the value is read afterwards, or read in a ``finally:``.
    """
    for ancestor in md.ancestors(loop):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            break
        if isinstance(ancestor, (cst.Try, cst.TryStar)) and md.is_ancestor(ancestor.body, loop):
            guarded = [*ancestor.handlers] + ([ancestor.finalbody] if ancestor.finalbody else [])
            for use in uses:
                if any(md.is_ancestor(block, use) for block in guarded):
                    return (f"`{name}` is read in an `except`/`finally` block that runs "
                            "when the loop raises")
            if ancestor.handlers and any(_may_run_after(md, use, ancestor) for use in uses):
                return f"`{name}` is read after an `except` that can stop the loop midway"
        if isinstance(ancestor, cst.With) and _suppresses(md, ancestor) and any(
            _may_run_after(md, use, ancestor) for use in uses
        ):
            return f"`{name}` is read after a `with` block that suppresses exceptions"
    return None


def _may_run_after(md: Metadata, use: cst.CSTNode, block: cst.CSTNode) -> bool:
    """Whether ``use`` (outside ``block``) may run after ``block`` has been left."""
    if use is block or md.is_ancestor(block, use):
        return False
    if md.position(use)[0] > md.position(block)[2]:
        return True
    for ancestor in md.ancestors(block):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(ancestor, (cst.For, cst.While)) and md.is_ancestor(ancestor, use):
            return True  # the next turn of an enclosing loop
    return False


def _suppresses(md: Metadata, statement: cst.With) -> bool:
    for item in statement.items:
        call = item.item
        if isinstance(call, cst.Call) and md.qualified_names(call.func) & {
            "contextlib.suppress"
        }:
            return True
    return False


def runs_inline(inner: Scope | None, scope: Scope) -> bool:
    """A list, set or dict comprehension runs where it stands; a generator runs later."""
    while isinstance(inner, ComprehensionScope):
        if isinstance(inner.node, cst.GeneratorExp):
            return False
        inner = inner.parent
    return inner is scope


def add_conversions(rewrite: Rewrite, uses: HostUses, loop: Loop, conversion: str) -> Rewrite:
    """Insert ``conversion`` before each conditional read and after the loop, as needed."""
    for where in uses.before:
        rewrite = rewrite.insert_before(where, [statement(conversion)])
    if uses.after_loop:
        rewrite = rewrite.insert_after(loop, [statement(conversion)])
    return rewrite


def conversion_statement(analysis: ModuleAnalysis, name: str,
                         host_values: Sequence[cst.BaseExpression], reads: Sequence[HostRead],
                         rewrite: Rewrite, *,
                         increment_types: Sequence[str | None] | None = None
                         ) -> tuple[str, Rewrite]:
    """The statement that turns ``name`` back into the Python number the original had.

    ``host_values`` are the values the name is given on the host (its initial value and
    resets); ``reads`` are the reads now replaced by tensors; ``increment_types`` the
    Python types ("float", "int" or None for unknown) of what the loop adds, when the
    caller knows them. See :func:`python_number_type` and :func:`number_conversion`.
    """
    if increment_types is None:
        increment_types = [_read_type(analysis, r) for r in reads]
    kind = python_number_type([numeric_type(v) for v in host_values], increment_types)
    return number_conversion(analysis, name, kind, rewrite)


def python_number_type(literal_types: Sequence[str | None],
                       increment_types: Sequence[str | None]) -> str | None:
    """The type Python gives a number that starts as one of ``literal_types`` and is
    updated by values of ``increment_types``: "float", "int", or None when it depends on
    the run (then the conversion must mirror the tensor's dtype)."""
    if literal_types and all(t == "float" for t in literal_types):
        return "float"
    if literal_types and all(t == "int" for t in literal_types) and all(
        t == "int" for t in increment_types
    ):
        return "int"
    return None


def number_conversion(analysis: ModuleAnalysis, name: str, kind: str | None,
                      rewrite: Rewrite) -> tuple[str, Rewrite]:
    """``name = float(name)``, ``name = int(name)``, or, when the type depends on the run,
    ``name = name.item() if isinstance(name, torch.Tensor) else name``.

    The first two accept a plain number too (a loop that ran zero times); the last
    keeps it as it was and otherwise gives what ``.item()`` gives: an int for an
    integer tensor, a float for a floating one, as Python's arithmetic would have.
    """
    if kind == "float":
        return f"{name} = float({name})", rewrite
    if kind == "int":
        return f"{name} = int({name})", rewrite
    torch, rewrite = torch_ref(analysis, rewrite)
    return f"{name} = {name}.item() if isinstance({name}, {torch}.Tensor) else {name}", rewrite


def _read_type(analysis: ModuleAnalysis, read: HostRead) -> str | None:
    if read.how in ("float", "int"):
        return read.how
    family = analysis.tensors.dtype_class(read.tensor)
    return {"float": "float", "int": "int", "bool": "int"}.get(family or "")


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


def unpacked_value(md: Metadata, target: cst.Name) -> cst.BaseExpression | None:
    """In ``a, b = 0, 0.0``: the value that ``target`` receives (``0`` for ``a``), or None."""
    element = md.parent(target)
    targets = md.parent(element) if isinstance(element, cst.Element) else None
    holder = md.parent(targets) if isinstance(targets, (cst.Tuple, cst.List)) else None
    assign = md.parent(holder) if isinstance(holder, cst.AssignTarget) else None
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    values = assign.value
    if not isinstance(values, (cst.Tuple, cst.List)) or len(values.elements) != len(
        targets.elements  # type: ignore[union-attr]
    ) or any(isinstance(e, cst.StarredElement) for e in (*values.elements,
                                                          *targets.elements)):  # type: ignore[union-attr]
        return None
    index = next(i for i, e in enumerate(targets.elements) if e is element)  # type: ignore[union-attr]
    return values.elements[index].value


def after_loop(md: Metadata, node: cst.CSTNode, loop: Loop,
               enclosing_loops: Sequence[cst.CSTNode]) -> bool:
    """Whether ``node`` comes after ``loop`` and runs only once it has finished for good:
    not inside it, nor in a loop around it (whose next turn would run the loop again)."""
    return (md.position(node)[0] > md.position(loop)[2]
            and not any(md.is_ancestor(outer, node) for outer in enclosing_loops))


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


def count_under_condition(analysis: ModuleAnalysis, node: cst.If) -> cst.AugAssign | None:
    """The ``clipped += 1`` of ``if norm > max_norm: clipped += 1`` in a loop (issue 18,
    form e): an ``if`` without ``else`` whose only statement adds a number literal to a
    plain name, and whose test is a device tensor. NSY201 reports it (and fixes it where
    it can); the branch rules leave it to NSY201, so the ``if`` gets one finding."""
    from ..analysis import Kind
    from ._host import placed_on_host

    if node.orelse is not None or not isinstance(node.body, cst.IndentedBlock) or len(
            node.body.body) != 1:
        return None
    line = node.body.body[0]
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    update = line.body[0]
    if not isinstance(update, cst.AugAssign) or not isinstance(update.operator, cst.AddAssign):
        return None
    if not isinstance(update.target, cst.Name) or numeric_type(update.value) is None:
        return None
    if analysis.kind(node.test) is not Kind.TENSOR or placed_on_host(analysis, node.test):
        return None
    if analysis.loops.enclosing_loop(node) is None:
        return None
    return update
