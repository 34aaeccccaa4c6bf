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
  ``torch.compile`` (which makes another function hot), registers a callback
  (``trainer.set_callback("on_batch_end", f)`` makes ``f`` hot), changes the
  default device (``torch.set_default_device``, ``with torch.device(...):``,
  after which a factory makes no CPU tensor), or imports a package the module's
  own imports do not (the analysis asks whether a file imports torch or numpy), or
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
    analysis joins everything assigned to it);
  - a call ``self.x(...)`` in a kept method, when a live rule follows traced code
    (``Signal.TRACED_OUTPUT``): the methods named ``x`` of the same class (NSY304
    follows such calls from ``forward`` to the output call they reach);
  - a function of the module that iterates over one of its parameters (``for v in
    values:``), kept: every function that mentions its name (the analysis takes the
    elements for tensors when every call passes a tensor there);
  - a name of kept code that is a class of the module: its method ``update`` (the
    analysis takes a class with one for a meter, ``meter.update(loss.item())``);
  - in a file that may call ``torch.compile``, every function that mentions a class
    of the module with a ``forward``: the analysis calls the class compiled only when
    the file compiles every instance it makes (``Model(...)``), wherever it makes one.

Everything outside functions and methods (imports, module-level code, class
bodies, nested classes) is always kept. A left-out function becomes a string
of as many lines, at its indentation, so that the text is still valid Python
with the same lines.

Inside a kept function in which the pre-filter finds no signal of the live rules
(kept only because kept code reaches it, such as a training script's
``parse_args``), argparse's declarations are left out the same way: the
statements ``p.add_argument(...)``, often a third of a training script, each on
lines of its own, where

* ``p`` is a name that the function (nested code included) binds only by
  ``p = ....ArgumentParser(...)`` statements (or ``add_argument_group``,
  ``add_mutually_exclusive_group``, ``add_parser``), and
* the arguments hold nothing but constants, builtins (``type=int``) that neither the
  function nor the code outside functions binds and no function declares ``global``,
  and displays, f-strings, operations and attributes of those.

Such a statement holds no call but its own, binds nothing and mentions no name
but ``p`` and builtins, so the analysis knows nothing more with it: not what a
name holds (``add_argument`` is no evidence), not where a name is used (no rule
acts on a parser), not what a function returns. And no finding sits in that
function, since none sits where the pre-filter finds no signal. The first statement
of a function's or a class's body stays (a string there would be its docstring).

The engine uses the slice to check a file, and falls back to the whole text
whenever a finding on the slice needs a fix or its edits. ``tests/test_prefilter.py``
and ``benchmarks/check_prefilter.py --findings`` check that findings are the
same with the pre-filter (and so the slicing) on and off.
"""

from __future__ import annotations

import ast
import builtins
import functools
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from . import prefilter, syntax
from .analysis import _tables as T
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
#: Calls whose effect reaches other functions, as the analysis sees it: a callback
#: registration makes the function registered hot, a default device makes every factory
#: call's tensor a device one (by the last name, any receiver: a superset).
_PINNING_CALLS = T.CALLBACK_REGISTRATIONS | {"set_default_device", "set_default_tensor_type"}
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
    #: ``x`` of the calls ``self.x(...)`` (or on the method's receiver, by its name).
    self_calls: set[str] = field(default_factory=set)
    #: A loop or comprehension iterates over a parameter (``for v in values``, also
    #: ``enumerate(values)`` and ``reversed(values)``).
    iterates_parameter: bool = False
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
    follow_calls = any(need.signals & prefilter.Signal.TRACED_OUTPUT for need in needs)
    functions: dict[str, list[_Unit]] = {}
    methods: dict[int, list[_Unit]] = {}  # id of a class -> its methods
    # (id of a class, attribute) -> its methods that store `self.<attribute>`
    storing: dict[tuple[int, str], list[_Unit]] = {}
    for unit in units:
        _link(unit, module_roots, aliases)
        if unit.cls is None:
            functions.setdefault(unit.node.name, []).append(unit)
        else:
            methods.setdefault(id(unit.cls), []).append(unit)
            for attribute in unit.self_stores:
                storing.setdefault((id(unit.cls), attribute), []).append(unit)
        constants -= unit.declared_global
        loggers -= unit.declared_global
    stored_globals -= constants
    classes = {statement.name: statement for statement in tree.body
               if isinstance(statement, ast.ClassDef)}
    # Classes whose instances may run compiled: see the module's documentation.
    models = {name for name, cls in classes.items()
              if any(unit.node.name == "forward" for unit in methods.get(id(cls), ()))
              } if aliases else set()

    kept: set[int] = set()
    todo: list[_Unit] = []

    def keep(unit: _Unit) -> None:
        if id(unit) not in kept:
            kept.add(id(unit))
            todo.append(unit)

    for unit in units:
        if unit.pinned or id(unit.node) in meeting or not models.isdisjoint(unit.names):
            keep(unit)

    # Who mentions a name (and, above, which methods store an attribute): built once, so
    # that the closure costs time linear in what the units mention (a look through every
    # unit for each name was quadratic in a file of thousands of functions).
    mentions: dict[bool, dict[str, list[_Unit]]] = {}  # by `plain`

    def mentioning(name: str, plain: bool) -> list[_Unit]:
        table = mentions.get(plain)
        if table is None:
            table = mentions[plain] = {}
            for unit in units:
                for mentioned in (unit.plain_names if plain else unit.names):
                    table.setdefault(mentioned, []).append(unit)
        return table.get(name, [])

    seen_names: set[str] = set()

    def reach(names: Iterable[str]) -> None:
        for name in names:
            if name in seen_names:
                continue
            seen_names.add(name)
            for unit in functions.get(name, ()):
                keep(unit)
            if name in classes:
                for unit in methods.get(id(classes[name]), ()):
                    if unit.node.name == "update":
                        keep(unit)
            if name in stored_globals:
                for unit in mentioning(name, plain=name in loggers):
                    keep(unit)

    reach(module_names)
    seen_attributes: set[tuple[int, str]] = set()
    while todo:
        unit = todo.pop()
        reach(unit.names)
        if unit.cls is None:
            if unit.iterates_parameter:
                for other in mentioning(unit.node.name, plain=False):
                    keep(other)
            continue
        if follow_calls:
            for other in methods.get(id(unit.cls), ()):
                if other.node.name in unit.self_calls:
                    keep(other)
        for attribute in unit.self_reads:
            if (id(unit.cls), attribute) in seen_attributes:
                continue
            seen_attributes.add((id(unit.cls), attribute))
            for other in storing.get((id(unit.cls), attribute), ()):
                keep(other)
    left_out = [_lines_of(u.node) for u in units if id(u) not in kept]
    declarations = _Declarations(tree, text, units)
    for unit in units:
        if id(unit) in kept and id(unit.node) not in meeting:
            left_out.extend(declarations.of(unit.node))
    if not left_out:
        return None
    return _blank_out(left_out, declarations.lines)


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
    arguments = node.args
    parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args,
                                  *arguments.kwonlyargs)}
    for child in syntax.walk(node):  # a call comes before its receiver
        kind = type(child)
        if kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
            iterated = child.iter  # type: ignore[attr-defined]
            if type(iterated) is ast.Call and type(iterated.func) is ast.Name and (
                    iterated.func.id in ("enumerate", "reversed")) and iterated.args:
                iterated = iterated.args[0]
            if type(iterated) is ast.Name and iterated.id in parameters:
                unit.iterates_parameter = True
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
            if type(func) is ast.Attribute and type(func.value) is ast.Name and (
                    func.value.id == "self" or func.value.id == receiver):
                unit.self_calls.add(func.attr)
            name = func.attr if type(func) is ast.Attribute else (
                func.id if type(func) is ast.Name else None)
            if name in _PINNING_CALLS:
                unit.pinned = True
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
        elif kind is ast.withitem:
            context = child.context_expr  # type: ignore[attr-defined]
            if type(context) is ast.Call and (  # `with torch.device("cuda"):`
                    (prefilter.dotted(context.func) or "").rpartition(".")[2] == "device"):
                unit.pinned = True
        elif kind is ast.Import:
            if any(a.name.split(".")[0] not in module_roots for a in child.names):  # type: ignore
                unit.pinned = True
        elif kind is ast.ImportFrom:
            module = child.module  # type: ignore[attr-defined]
            if module and not child.level and (  # type: ignore[attr-defined]
                module.split(".")[0] not in module_roots
            ):
                unit.pinned = True


def _lines_of(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """The first and last line of a function, decorators included (a function starts
    a line of its own and ends one)."""
    first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    return first, node.end_lineno or first


class _Declarations:
    """argparse's declarations that a function without signals can do without (see the
    module's documentation), as runs of whole lines."""

    def __init__(self, tree: ast.Module, text: str, units: list[_Unit]) -> None:
        self.tree = tree
        self.text = text
        self.units = units

    @functools.cached_property
    def lines(self) -> list[str]:
        from .engine import split_lines  # the engine imports this module

        return split_lines(self.text)

    def of(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[int, int]]:
        """The runs of lines (first, last) of ``function``'s declarations: siblings
        that follow each other make one run. None is the first statement of a body
        (a string there would be a docstring)."""
        blocks = [(owner, block) for owner in syntax.statements(function)
                  for block in _blocks(owner)]
        receivers = {id(s): r for _, block in blocks for s in block
                     if (r := _declaration_receiver(s)) is not None}
        if not receivers:
            return []
        parsers, bound = _function_bindings(function)
        module_bound = self.module_bound
        free = frozenset() if module_bound is None else _BUILTINS - module_bound - bound
        wanted = {id(s) for _, block in blocks for s in block
                  if receivers.get(id(s)) in parsers and self._on_own_lines(s)
                  and all(_inert(a, free) for a in _arguments(s.value))}  # type: ignore
        runs: list[tuple[int, int]] = []
        for owner, block in blocks:
            taken = [id(statement) in wanted for statement in block]
            if block is getattr(owner, "body", None) and type(owner) in _DOCUMENTED:
                taken[0] = False
            for is_taken, group in itertools.groupby(zip(taken, block, strict=True),
                                                     key=lambda pair: pair[0]):
                if is_taken:
                    run = [statement for _, statement in group]
                    runs.append((run[0].lineno, run[-1].end_lineno or run[-1].lineno))
        return runs

    @functools.cached_property
    def module_bound(self) -> set[str] | None:
        """The names that code outside the functions and methods binds, their own names,
        and those that any of them declares ``global``/``nonlocal``: with a function's
        own, every name that a name in it may refer to but a builtin. None after a
        ``*`` import."""
        skip = {id(unit.node) for unit in self.units}
        bound = {name for _, name in _bindings(self.tree, skip)}
        if "*" in bound:
            return None
        return bound.union({unit.node.name for unit in self.units},  # bound where defined
                           *(unit.declared_global for unit in self.units))

    def _on_own_lines(self, statement: ast.stmt) -> bool:
        """Nothing but indentation before ``statement`` on its first line, and nothing but
        blanks or a comment after it on its last (``a; b`` and ``if x: a`` share lines)."""
        first = self.lines[statement.lineno - 1]
        if len(first) - len(first.lstrip(" \t\f")) != statement.col_offset:
            return False
        last = self.lines[(statement.end_lineno or statement.lineno) - 1]
        rest = last.encode("utf-8")[statement.end_col_offset:].decode("utf-8").strip()
        return not rest or rest.startswith("#")


def _inert(node: ast.AST, free_builtins: frozenset[str]) -> bool:
    """Whether ``node`` is built of constants and ``free_builtins`` alone."""
    kind = type(node)
    if kind is ast.Constant:
        return True
    if kind is ast.Name:
        return node.id in free_builtins  # type: ignore[attr-defined]
    if kind in _INERT_DISPLAYS:
        return all(_inert(child, free_builtins) for child in syntax.children(node))
    if kind is ast.Dict:
        return None not in node.keys and all(  # type: ignore[attr-defined]
            _inert(child, free_builtins) for child in syntax.children(node))
    return False


#: The calls whose value is an argparse parser, or a group of its arguments.
_PARSER_MAKERS = frozenset({"ArgumentParser", "add_argument_group",
                            "add_mutually_exclusive_group", "add_parser"})
#: What an inert argument may be built of, besides constants, builtins and dicts.
_INERT_DISPLAYS = frozenset({ast.Tuple, ast.List, ast.Set, ast.JoinedStr, ast.FormattedValue,
                             ast.BinOp, ast.UnaryOp, ast.Attribute})
_BUILTINS = frozenset(dir(builtins))
#: The statements whose body's first string is their docstring.
_DOCUMENTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _declaration_receiver(statement: ast.AST) -> str | None:
    """``p`` of a statement ``p.add_argument(...)``."""
    if type(statement) is not ast.Expr:
        return None
    call = statement.value  # type: ignore[attr-defined]
    if type(call) is not ast.Call or type(call.func) is not ast.Attribute or (
            call.func.attr != "add_argument") or type(call.func.value) is not ast.Name:
        return None
    return call.func.value.id


def _arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(keyword.value for keyword in call.keywords)]


def _function_bindings(function: ast.FunctionDef | ast.AsyncFunctionDef,
                       ) -> tuple[set[str], set[str]]:
    """The names that ``function`` (nested code included) binds only by ``name =
    <parser maker>(...)`` (:data:`_PARSER_MAKERS`), and every name it binds."""
    makers: set[int] = set()
    parsers: set[str] = set()
    others: set[str] = set()
    for node, name in _bindings(function):  # an assignment comes before its target
        if type(node) is ast.Assign:
            if len(node.targets) == 1 and type(node.targets[0]) is ast.Name and (  # type: ignore
                    type(node.value) is ast.Call) and (  # type: ignore[attr-defined]
                    (prefilter.dotted(node.value.func) or "").rpartition(".")[2]  # type: ignore
                    in _PARSER_MAKERS):
                makers.add(id(node.targets[0]))  # type: ignore[attr-defined]
            continue
        (parsers if id(node) in makers else others).add(name)
    return parsers - others, parsers | others


def _bindings(tree: ast.AST, skip: set[int] | None = None,
              ) -> Iterator[tuple[ast.AST, str]]:
    """Each binding under ``tree`` (``tree``'s own name included) but under the nodes of
    ``skip``, with the name it binds: stores and deletions, parameters, imports (``*``
    for a star import), ``def`` and ``class``, ``except ... as``, ``match`` captures,
    type parameters and ``global``/``nonlocal`` declarations. Each assignment is given
    too, with an empty name, before its targets."""
    stack = [tree]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                yield node, node.id  # type: ignore[attr-defined]
            continue
        if kind is ast.Assign:
            yield node, ""
        elif kind is ast.arg:
            yield node, node.arg  # type: ignore[attr-defined]
        elif kind is ast.alias:
            yield node, node.asname or node.name.split(".")[0]  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            for name in node.names:  # type: ignore[attr-defined]
                yield node, name
        elif kind is ast.MatchMapping:
            if node.rest:  # type: ignore[attr-defined]
                yield node, node.rest  # type: ignore[attr-defined]
        else:  # def, class, except ... as, match captures, type parameters
            name = getattr(node, "name", None)
            if type(name) is str:
                yield node, name
        found = syntax.children(node)
        stack.extend(found if skip is None else [c for c in found if id(c) not in skip])


def _blocks(statement: ast.AST) -> Iterator[list[ast.stmt]]:
    """The lists of statements that ``statement`` holds directly."""
    for field_name in ("body", "orelse", "finalbody"):
        block = getattr(statement, field_name, None)
        if type(block) is list and block and isinstance(block[0], ast.stmt):
            yield block


def _blank_out(runs: list[tuple[int, int]], lines: list[str]) -> str:
    """The text of ``lines`` with each run of lines (first, last; whole statements that
    start a line of their own and end one) replaced by a string of its lines' ends, at
    the indentation of its first line: the text is still valid Python with the same
    lines. One string statement costs LibCST one node, where empty lines cost one each.
    """
    lines = list(lines)
    for first, last in runs:
        start, end = first - 1, last - 1
        content = lines[start].rstrip(_LINE_END)
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
