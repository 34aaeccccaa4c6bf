"""A copy of a file in which each loop body is its own function, for counting graph breaks.

Dynamo gives up on a whole frame at a graph break inside a ``for``/``while`` loop
(torch 2.13: "graph break in loop ... Skipping the frame") and runs it in eager
mode, so the breaks after the first one in that frame are never seen. When the
frame cannot be resumed at all (a live local that dynamo cannot rebuild, such as
an ``nn.CrossEntropyLoss`` created in the frame: "Reconstruction failure"),
even resuming inside the loop (:func:`.breaks.resume_in_loops`) stops at the
first break.

This module rewrites every loop of every function of the file::

    for x, y in batches:                 def __nosync_loop_body_38_0__():
        BODY                                 nonlocal <names BODY binds>
                                  ->         BODY   (break -> return (0,), continue ->
                                                     return (1,), return v -> return (2, v))
                                         for x, y in batches:
                                             __nosync_r__ = __nosync_loop_body_38_0__()
                                             if __nosync_r__ is not None: (break / continue /
                                                                           return as it says)

Each call of a body is then a frame of its own: when dynamo skips the frame
holding the loop, it still compiles every body call as a separate frame, with
no loop in it, and meets every break of the body, each at its own line (the
statements keep their line numbers). The copy runs the same operations in the
same order on the same values; it exists only to be measured, never compared.

A loop is left as it is when its body cannot move into a function unchanged:
``yield`` or ``await`` in it, a zero-argument ``super()``, ``locals()``,
``vars()``, ``exec``/``eval``, ``global``/``nonlocal`` statements, or an
``async for``.
"""

from __future__ import annotations

import ast
import itertools
import sys
from collections.abc import Iterable

PREFIX = "__nosync_loop_body_"
RESULT = "__nosync_r__"
_UNSAFE_CALLS = {"super", "locals", "vars", "exec", "eval", "dir"}


def split_loop_bodies(text: str, filename: str, tag: str = "") -> tuple[ast.Module, int]:
    """The module of ``text`` with its loop bodies as functions, and how many were moved.

    ``tag`` goes into the names of the functions made: the copies of two versions of a
    file must differ in it (dynamo takes a body's code for the other version's when the
    two are equal, and equal code objects may come from different files). Raises
    SyntaxError for a file that does not parse.
    """
    tree = ast.parse(text, filename)
    mover = _Mover(tag)
    mover.visit(tree)
    ast.fix_missing_locations(tree)
    return tree, mover.moved


class _Mover(ast.NodeTransformer):
    """Moves loop bodies into functions, one function (scope) at a time."""

    def __init__(self, tag: str = "") -> None:
        self.moved = 0
        self.tag = "".join(c if c.isalnum() else "_" for c in tag)
        self._numbers = itertools.count()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        return self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AsyncFunctionDef:
        return node  # an await inside a moved body would change meaning: leave it

    def _function(self, node: ast.FunctionDef) -> ast.FunctionDef:
        declared = _declared(node.body)
        scope = _Scope(self, declared)
        node.body = scope.statements(node.body)
        names = scope.names - _parameters(node)
        if names:
            # The moved bodies declare these names nonlocal: they must be bound in this
            # function, and bound before the bodies are made (dynamo cannot pass an empty
            # cell on: "Read uninitialized cell"). So they start as None. Only a program
            # that reads a name before assigning it (an UnboundLocalError) runs otherwise.
            binding = ast.Assign(targets=[ast.Name(n, ast.Store()) for n in sorted(names)],
                                 value=ast.Constant(None))
            _copy_locations(binding, node.body[0] if node.body else node)
            node.body.insert(_after_docstring(node.body), binding)
        return node


class _Scope:
    """The loops of one function (not of the functions nested in it)."""

    def __init__(self, mover: _Mover, declared: set[str]) -> None:
        self.mover = mover
        #: Names declared global or nonlocal in the function: bodies are left alone there.
        self.declared = declared
        #: Names the moved bodies declare nonlocal.
        self.names: set[str] = set()

    def statements(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for statement in body:
            out.extend(self.statement(statement))
        return out

    def statement(self, node: ast.stmt) -> list[ast.stmt]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [self.mover.visit(node)]
        # Loops inside first (their dispatch code then moves with the outer body).
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(node, name, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                setattr(node, name, self.statements(inner))
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            for handler in node.handlers:
                handler.body = self.statements(handler.body)
        if isinstance(node, ast.Match):
            for case in node.cases:
                case.body = self.statements(case.body)
        if isinstance(node, (ast.For, ast.While)) and self._movable(node):
            return self._move(node)
        return [node]

    def _movable(self, loop: ast.For | ast.While) -> bool:
        for node in _walk_scope(loop.body):
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.Global,
                                 ast.Nonlocal, ast.AsyncFor, ast.AsyncWith)):
                return False
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in _UNSAFE_CALLS):
                return False
        bound = _bound(loop.body)
        return not (bound & self.declared)

    def _move(self, loop: ast.For | ast.While) -> list[ast.stmt]:
        number = next(self.mover._numbers)
        name = f"{PREFIX}{loop.lineno}_{number}{'_' + self.mover.tag if self.mover.tag else ''}__"
        bound = _bound(loop.body)
        self.names |= bound
        body = [_Exits().visit(statement) for statement in loop.body]
        if bound:
            body.insert(0, ast.Nonlocal(names=sorted(bound)))
        body.append(ast.Return(value=None))
        function = ast.FunctionDef(
            name=name, args=ast.arguments(posonlyargs=[], args=[], vararg=None,
                                          kwonlyargs=[], kw_defaults=[], kwarg=None,
                                          defaults=[]),
            body=body, decorator_list=[], returns=None,
            **({"type_params": []} if sys.version_info >= (3, 12) else {}))
        result = ast.Name(RESULT, ast.Load())
        call = ast.Assign(targets=[ast.Name(RESULT, ast.Store())],
                          value=ast.Call(func=ast.Name(name, ast.Load()), args=[], keywords=[]))
        kind = ast.Subscript(value=result, slice=ast.Constant(0), ctx=ast.Load())
        dispatch = ast.If(
            test=ast.Compare(left=result, ops=[ast.IsNot()], comparators=[ast.Constant(None)]),
            body=[
                ast.If(test=ast.Compare(left=kind, ops=[ast.Eq()], comparators=[ast.Constant(0)]),
                       body=[ast.Break()], orelse=[]),
                ast.If(test=ast.Compare(left=kind, ops=[ast.Eq()], comparators=[ast.Constant(1)]),
                       body=[ast.Continue()], orelse=[]),
                ast.Return(value=ast.Subscript(value=result, slice=ast.Constant(1),
                                               ctx=ast.Load())),
            ], orelse=[])
        self.names.add(RESULT)
        loop.body = [call, dispatch]
        for new in (function, call, dispatch):
            _copy_locations(new, loop)
        self.mover.moved += 1
        return [function, loop]


class _Exits(ast.NodeTransformer):
    """``break``/``continue`` of the moved loop and every ``return`` as return values."""

    def __init__(self) -> None:
        self._depth = 0  # loops entered inside the moved body

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def _loop(self, node: ast.For | ast.While) -> ast.AST:
        self._depth += 1
        node.body = [self.visit(s) for s in node.body]
        self._depth -= 1
        node.orelse = [self.visit(s) for s in node.orelse]  # else: belongs to the outer
        return node

    visit_For = visit_While = _loop

    def visit_Break(self, node: ast.Break) -> ast.AST:
        return node if self._depth else _returning(node, ast.Tuple([ast.Constant(0)], ast.Load()))

    def visit_Continue(self, node: ast.Continue) -> ast.AST:
        return node if self._depth else _returning(node, ast.Tuple([ast.Constant(1)], ast.Load()))

    def visit_Return(self, node: ast.Return) -> ast.AST:
        value = node.value if node.value is not None else ast.Constant(None)
        return _returning(node, ast.Tuple([ast.Constant(2), value], ast.Load()))


def _returning(old: ast.stmt, value: ast.expr) -> ast.Return:
    new = ast.Return(value=value)
    _copy_locations(new, old)
    return new


def _copy_locations(new: ast.AST, old: ast.AST) -> None:
    """Give ``new`` and every node in it without a position the position of ``old``."""
    for node in ast.walk(new):
        if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
            ast.copy_location(node, old)


def _walk_scope(body: Iterable[ast.stmt]) -> Iterable[ast.AST]:
    """Every node of ``body`` outside the functions, lambdas and classes defined in it."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            if not isinstance(node, ast.Lambda):
                stack.extend(node.decorator_list)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _bound(body: list[ast.stmt]) -> set[str]:
    """Names that ``body`` binds in its function's scope (a comprehension's own variables
    are its own; a ``:=`` inside one binds in the function)."""
    targets: set[int] = set()
    nodes = list(_walk_scope(body))
    for node in nodes:
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for generator in node.generators:
                targets.update(id(t) for t in ast.walk(generator.target))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if id(node) not in targets:
                names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


def _parameters(node: ast.FunctionDef) -> set[str]:
    arguments = node.args
    names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    names.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    return names


def _declared(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in _walk_scope(body):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _after_docstring(body: list[ast.stmt]) -> int:
    if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        return 1
    return 0
