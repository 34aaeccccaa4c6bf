"""Slicing: the part of a live file that LibCST needs to see.

The pre-filter (:mod:`nosync_fix.prefilter`) decides whether a file needs
LibCST at all. Most files that do need it hold their findings in a few
functions, yet LibCST's parse, scopes and the analyses cost as much for every
other line. :func:`relevant_text` blanks out the functions (and methods of
classes) that cannot change the findings: the rules run on the rest, which
keeps every line where it was, so findings keep their positions.

A function (or method) is kept when

* the pre-filter finds one of the live rules' signals in it (a finding sits
  where its signal is: the same argument that makes the pre-filter sound), or
* it declares ``global``/``nonlocal`` names, calls what may be
  ``torch.compile`` (which makes another function hot), or imports a package
  the module's own imports do not (the analysis asks whether a file imports
  torch or numpy), or
* kept code may reach it, as the analysis does (the closure):
  - a name of kept code that is bound to the function;
  - a name of kept code that is a module-level variable: every function that
    mentions it is kept (its uses anywhere are evidence of what it holds, and
    rules look at every use of a name they rewrite), unless the module binds it
    only by ``name = value`` statements, each of a constant or a ``logging`` logger
    (``XLA_AVAILABLE = True`` in one branch, ``False`` in the other), and no
    function declares it ``global``: such a host value is no evidence and nothing
    a rule rewrites;
    nor, for a name the module binds once to a logger of any library
    (``logger = logging.get_logger(__name__)``, as diffusers and transformers
    spell it) and no function declares ``global``, a function whose every mention
    of it calls a logging method on it (``logger.warning(...)``): such a call is
    no evidence of a tensor (no method of ``_tables``' evidence sets), neither
    binds nor fills the name, and the rules act on it where it is, in its own
    function, which its own signals keep;
  - an attribute ``self.x`` read in a kept method: the methods of the same class
    that assign ``self.x`` (or ``register_buffer("x", ...)``) are kept (the
    analysis joins everything assigned to it).

Everything outside functions and methods (imports, module-level code, class
bodies, nested classes) is always kept. A left-out function becomes a string
of as many lines, at its indentation, so that the text is still valid Python
with the same lines.

The engine uses the slice to check a file, and falls back to the whole text
whenever a finding on the slice needs a fix or its edits. ``tests/test_prefilter.py``
and ``benchmarks/check_prefilter.py --findings`` check that findings are the
same with the pre-filter (and so the slicing) on and off.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from . import prefilter, syntax
from .prefilter import Need, Scan

#: Files smaller than this go to LibCST whole: slicing would save less than it costs.
MIN_SLICED_BYTES = 4000

_LINE_END = "\r\n"

#: Nodes whose body is a scope of its own (the rest of them, decorators, bases and
#: defaults, is evaluated in the enclosing one).
_OWN_SCOPES = frozenset({ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda})
#: The calls that make a module-level name a logger (``logging.getLogger``, the
#: ``logging.get_logger`` of diffusers and transformers).
_LOGGER_GETTERS = frozenset({"getLogger", "get_logger"})
#: Methods of a logger whose calls are no evidence of what the receiver holds (none is
#: in ``_tables``' evidence sets; ``log`` is left out: ``t.log()`` is a tensor's).
_LOGGING_CALLS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "fatal",
                            "exception", "warning_once", "info_once"})


@dataclass(eq=False)
class _Unit:
    """A function or method of the module, and what links it to other code."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: ast.ClassDef | None
    names: set[str] = field(default_factory=set)
    #: The names among ``names`` mentioned other than as the receiver of a logging
    #: method call (:data:`_LOGGING_CALLS`).
    plain_names: set[str] = field(default_factory=set)
    self_reads: set[str] = field(default_factory=set)
    self_stores: set[str] = field(default_factory=set)
    declared_global: set[str] = field(default_factory=set)
    pinned: bool = False


def relevant_text(tree: ast.Module, text: str, found: Scan,
                  needs: Sequence[Need]) -> str | None:
    """``text`` with the functions and methods that cannot matter to ``needs`` left
    out (see the module's documentation); None when all of them may matter."""
    if len(text) < MIN_SLICED_BYTES:
        return None
    meeting = found.units_meeting(needs)
    if meeting is None:
        return None
    units = [_Unit(node, cls) for node, cls in prefilter.units(tree)]
    if not units:
        return None
    module_roots, module_names, stored_globals, constants, loggers = _module_code(tree, units)
    aliases = found.compile_aliases()
    functions: dict[str, list[_Unit]] = {}
    for unit in units:
        _link(unit, module_roots, aliases)
        if unit.cls is None:
            functions.setdefault(unit.node.name, []).append(unit)
        constants -= unit.declared_global
        loggers -= unit.declared_global
    stored_globals -= constants

    kept: set[int] = set()
    todo: list[_Unit] = []

    def keep(unit: _Unit) -> None:
        if id(unit) not in kept:
            kept.add(id(unit))
            todo.append(unit)

    for unit in units:
        if unit.pinned or id(unit.node) in meeting:
            keep(unit)

    seen_names: set[str] = set()

    def reach(names: Iterable[str]) -> None:
        for name in names:
            if name in seen_names:
                continue
            seen_names.add(name)
            for unit in functions.get(name, ()):
                keep(unit)
            if name in stored_globals:
                only_logged = name in loggers
                for unit in units:
                    if name in (unit.plain_names if only_logged else unit.names):
                        keep(unit)

    reach(module_names)
    seen_attributes: set[tuple[int, str]] = set()
    while todo:
        unit = todo.pop()
        reach(unit.names)
        if unit.cls is None:
            continue
        for attribute in unit.self_reads:
            if (id(unit.cls), attribute) in seen_attributes:
                continue
            seen_attributes.add((id(unit.cls), attribute))
            for other in units:
                if other.cls is unit.cls and attribute in other.self_stores:
                    keep(other)
    if len(kept) == len(units):
        return None
    return _blank_out([u.node for u in units if id(u) not in kept], text)


def _module_code(tree: ast.Module, units: list[_Unit],
                 ) -> tuple[set[str], set[str], set[str], set[str], set[str]]:
    """Of the code outside the units: the packages it imports, the names it mentions,
    the names it binds other than by ``import``, those among them bound only by
    ``name = value`` statements of constants or ``logging`` loggers, and those bound
    once, by a module-level ``name = ....get_logger(...)`` (or ``getLogger``) of any
    library."""
    skip = {id(unit.node) for unit in units}
    roots: set[str] = set()
    names: set[str] = set()
    stores: dict[str, int] = {}
    assigned: dict[str, list[ast.expr]] = {}  # by `name = value` statements
    # With each node, whether a name stored there is a module variable: not in a class's
    # body (`sample: torch.Tensor` of an output dataclass binds an attribute, which no
    # function sees by its bare name) nor in a function's, unless it declares names
    # `global` or `nonlocal` (or a class body does).
    stack: list[tuple[ast.AST, bool]] = [(tree, True)]
    while stack:
        node, module_scope = stack.pop()
        kind = type(node)
        if module_scope and kind is ast.Assign and len(node.targets) == 1 and (  # type: ignore
                type(node.targets[0]) is ast.Name):  # type: ignore[attr-defined]
            assigned.setdefault(node.targets[0].id, []).append(node.value)  # type: ignore
        if kind is ast.Name:
            names.add(node.id)  # type: ignore[attr-defined]
            if module_scope and not isinstance(node.ctx, ast.Load):  # type: ignore
                stores[node.id] = stores.get(node.id, 0) + 1  # type: ignore[attr-defined]
        elif kind is ast.Import:
            roots.update(alias.name.split(".")[0] for alias in node.names)  # type: ignore
        elif kind is ast.ImportFrom:
            if node.module and not node.level:  # type: ignore[attr-defined]
                roots.add(node.module.split(".")[0])  # type: ignore[attr-defined]
        # A scope that declares names global (itself or one nested in it): all its stores
        # count, as if at module level.
        inner = kind in _OWN_SCOPES and _declares_global(node, skip)
        body = node.body if kind in _OWN_SCOPES else ()  # type: ignore[attr-defined]
        body_ids = {id(b) for b in body} if type(body) is list else {id(body)}
        for child in syntax.children(node):
            if id(child) not in skip:
                stack.append((child, inner if id(child) in body_ids else module_scope))
    # Every binding a `name = constant` (`XLA_AVAILABLE = True` in one branch, `False`
    # in the other): the analysis joins them to a host value, whatever the uses.
    constants = {
        name for name, values in assigned.items() if len(values) == stores.get(name)
        and all(_host_constant(value, "logging" in roots) for value in values)}
    loggers = {
        statement.targets[0].id for statement in tree.body
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and stores.get(statement.targets[0].id) == 1
        and isinstance(statement.value, ast.Call)
        and (prefilter.dotted(statement.value.func) or "").rpartition(".")[2] in _LOGGER_GETTERS}
    return roots, names, set(stores), constants, loggers


def _declares_global(node: ast.AST, skip: set[int]) -> bool:
    """Whether a ``global`` or ``nonlocal`` statement is in ``node`` (outside ``skip``)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is ast.Global or type(current) is ast.Nonlocal:
            return True
        stack.extend(c for c in syntax.children(current) if id(c) not in skip)
    return False


def _host_constant(value: ast.expr, logging_imported: bool) -> bool:
    """``3``, ``-1.0``, ``"name"``, ``(1, 2)``, ``logging.getLogger(__name__)``: values the
    analysis calls host values whatever the rest of the module does."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        return isinstance(value.operand, ast.Constant)
    if isinstance(value, ast.Tuple):
        return all(_host_constant(e, logging_imported) for e in value.elts)
    return logging_imported and isinstance(value, ast.Call) and (
        prefilter.dotted(value.func) in ("logging.getLogger", "getLogger"))


def _link(unit: _Unit, module_roots: set[str], compile_aliases: set[str]) -> None:
    """What ``unit`` mentions, and whether it must be kept whatever it holds."""
    node = unit.node
    receiver = None
    if unit.cls is not None:
        positional = node.args.posonlyargs + node.args.args
        receiver = positional[0].arg if positional else None
    logging_receivers: set[int] = set()
    for child in syntax.walk(node):  # a call comes before its receiver
        kind = type(child)
        if kind is ast.Name:
            unit.names.add(child.id)  # type: ignore[attr-defined]
            if id(child) not in logging_receivers:
                unit.plain_names.add(child.id)  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            value = child.value  # type: ignore[attr-defined]
            if receiver is not None and isinstance(value, ast.Name) and value.id == receiver:
                attribute = child.attr  # type: ignore[attr-defined]
                unit.self_reads.add(attribute)
                if not isinstance(child.ctx, ast.Load):  # type: ignore[attr-defined]
                    unit.self_stores.add(attribute)
        elif kind is ast.Call:
            func = child.func  # type: ignore[attr-defined]
            if type(func) is ast.Attribute and func.attr in _LOGGING_CALLS and (
                    type(func.value) is ast.Name):
                logging_receivers.add(id(func.value))
            if receiver is not None and isinstance(func, ast.Attribute) and func.attr in (
                "register_buffer", "register_parameter"
            ):
                for argument in child.args[:1]:  # type: ignore[attr-defined]
                    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                        unit.self_stores.add(argument.value)
            if compile_aliases and prefilter.dotted(func) in compile_aliases:
                unit.pinned = True
        elif kind is ast.Global or kind is ast.Nonlocal:
            unit.pinned = True
            unit.declared_global.update(child.names)  # type: ignore[attr-defined]
        elif kind is ast.Import:
            if any(a.name.split(".")[0] not in module_roots for a in child.names):  # type: ignore
                unit.pinned = True
        elif kind is ast.ImportFrom:
            module = child.module  # type: ignore[attr-defined]
            if module and not child.level and (  # type: ignore[attr-defined]
                module.split(".")[0] not in module_roots
            ):
                unit.pinned = True


def _blank_out(nodes: list[ast.FunctionDef | ast.AsyncFunctionDef], text: str) -> str:
    """``text`` with each function of ``nodes`` replaced by a string of its lines' ends.

    A function (decorators included) starts a line of its own and ends one, so whole
    lines go; each keeps its own line ending. One string statement costs LibCST one
    node, where empty lines cost one each.
    """
    from .engine import split_lines  # the engine imports this module

    lines = split_lines(text)
    for node in nodes:
        start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
        end = (node.end_lineno or start + 1) - 1
        first = lines[start]
        content = first.rstrip(_LINE_END)
        indent = content[:len(content) - len(content.lstrip(" \t\f"))]
        for index in range(start, end + 1):
            line = lines[index]
            lines[index] = line[len(line.rstrip(_LINE_END)):]
        if start == end:
            lines[start] = indent + '""""""' + lines[start]
        else:
            lines[start] = indent + '"""' + lines[start]
            lines[end] = '"""' + lines[end]
    return "".join(lines)
