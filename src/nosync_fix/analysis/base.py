"""Shared plumbing for the analyses: resolved metadata and small tree helpers."""

from __future__ import annotations

import ast
import contextlib
import functools
import operator
import re
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TypeVar

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    BatchableMetadataProvider,
    CodeRange,
    ExpressionContext,
    ExpressionContextProvider,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)
from libcst.metadata.scope_provider import (
    _ASSIGNMENT_LIKE_NODES,
    Access,
    Assignment,
    BaseAssignment,
    DeferredAccess,
    QualifiedName,
    Scope,
    ScopeVisitor,
    _is_assignment,
)

_N = TypeVar("_N", bound=cst.CSTNode)
_T = TypeVar("_T")
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")

#: The LibCST providers behind :class:`Metadata` (which resolves them lazily, and
#: computes parents and qualified names itself from the same information).
ANALYSIS_METADATA = (ParentNodeProvider, ScopeProvider, QualifiedNameProvider, PositionProvider)
#: The node types :meth:`Metadata.nodes` lists.
INDEXED = (cst.Call, cst.Import, cst.ImportFrom, cst.FunctionDef)

FUNCTION_LIKE = (cst.FunctionDef, cst.Lambda)
LOOPS = (cst.For, cst.While)
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class Metadata:
    """Metadata of one module, resolved on first use and shared by every analysis.

    Each piece costs a pass over the whole tree, so nothing is resolved before an
    analysis asks for it: a file in which no rule finds a candidate never pays for
    scopes or positions. Qualified names come from the scopes
    (``Scope.get_qualified_names_for``, which is all ``QualifiedNameProvider``
    does, less its extra pass over every node).
    """

    def __init__(self, wrapper: cst.MetadataWrapper, source: Source | None = None) -> None:
        self.wrapper = wrapper
        self.module = wrapper.module
        #: The ``ast`` of the text, when known: statements' lines without rendering
        #: the module.
        self.source = source
        self._accesses: dict[int, Access] | None = None
        self._statement_positions: dict[int, Mapping[cst.CSTNode, CodeRange]] = {}
        self._statement_lines: dict[int, dict[int, int]] = {}
        #: The answers of :meth:`statement_of` and :meth:`small_statement_of`, for every
        #: node passed on the way up: the reads of one long expression share its walk.
        self._statements: dict[cst.CSTNode, cst.BaseStatement | None] = {}
        self._small_statements: dict[cst.CSTNode, cst.BaseSmallStatement | None] = {}
        self._qualified: dict[tuple[int, str], frozenset[str]] = {}
        self._dotted: dict[int, str | None] = {}  # _dotted_name's answers
        #: The ``ast`` statements of LibCST blocks (:func:`_ast_child`).
        self._blocks: dict[int, dict[int, ast.stmt]] = {}

    @functools.cached_property
    def parents(self) -> Mapping[cst.CSTNode, cst.CSTNode]:
        return self._tree_index.parents

    @functools.cached_property
    def scopes(self) -> Mapping[cst.CSTNode, Scope | None]:
        return resolve_alone(self.wrapper, ScopeProvider)

    @functools.cached_property
    def positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        return _positions(self.module)

    def source_order(self, node: cst.CSTNode) -> int:
        """Where ``node`` comes in a walk of the module: for a fixed order of what LibCST
        keeps in sets (``Assignment.references``), whose iteration order varies by run."""
        return self._order[id(node)]

    @functools.cached_property
    def _order(self) -> dict[int, int]:
        return {id(node): index for index, node in enumerate(self.walk_order)}

    @property
    def walk_order(self) -> list[cst.CSTNode]:
        """Every node of the module but :data:`TRIVIA`, in the order of :func:`walk`
        (LibCST's)."""
        return self._tree_index.order

    def nodes(self, kind: type[_N]) -> list[_N]:
        """Every node of one of the :data:`INDEXED` types, in source order."""
        return self._tree_index.nodes[kind]  # type: ignore[return-value]

    @functools.cached_property
    def _tree_index(self) -> _TreeIndex:
        index = _TreeIndex()
        parents = index.parents
        found = index.nodes
        order = index.order.append
        for node, parent in walk(self.module):
            order(node)
            if parent is not None:
                parents[node] = parent
            listed = found.get(type(node))
            if listed is not None:
                listed.append(node)
        return index

    # -- tree navigation -------------------------------------------------------------------

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """The parents of ``node``, nearest first, up to the module."""
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def is_ancestor(self, ancestor: cst.CSTNode, node: cst.CSTNode) -> bool:
        return any(a is ancestor for a in self.ancestors(node))

    def enclosing(self, node: cst.CSTNode, kinds: type | tuple[type, ...]) -> cst.CSTNode | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, kinds):
                return ancestor
        return None

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        found = self.enclosing(node, cst.FunctionDef)
        return found if isinstance(found, cst.FunctionDef) else None

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        found = self.enclosing(node, cst.ClassDef)
        return found if isinstance(found, cst.ClassDef) else None

    def statement_of(self, node: cst.CSTNode) -> cst.BaseStatement | None:
        """The statement that holds ``node`` and sits directly in a block or module body."""
        known = self._statements
        parents = self.parents
        path: list[cst.CSTNode] = []
        current: cst.CSTNode | None = node
        found: cst.BaseStatement | None = None
        while current is not None:
            if current in known:
                found = known[current]
                break
            parent = parents.get(current)
            if isinstance(current, cst.BaseStatement) and isinstance(
                parent, (cst.Module, cst.IndentedBlock)
            ):
                found = current
                break
            path.append(current)
            current = parent
        for passed in path:
            known[passed] = found
        return found

    def small_statement_of(self, node: cst.CSTNode) -> cst.BaseSmallStatement | None:
        if isinstance(node, cst.BaseSmallStatement):
            return node
        known = self._small_statements
        parents = self.parents
        path: list[cst.CSTNode] = []
        current = parents.get(node)
        found: cst.BaseSmallStatement | None = None
        while current is not None:
            if current in known:
                found = known[current]
                break
            if isinstance(current, cst.BaseSmallStatement):
                found = current
                break
            path.append(current)
            current = parents.get(current)
        known[node] = found
        for passed in path:
            known[passed] = found
        return found

    def position(self, node: cst.CSTNode) -> tuple[int, int, int, int]:
        """``(line, column, end_line, end_column)``: 1-based lines, 0-based columns.

        ``PositionProvider`` records a range for every node of the module, ten times
        the cost of rendering it. A finding needs the range of one node: it is
        resolved on the statement that holds the node alone, rendered as a module of
        its own, and shifted by the lines before that statement. The statement is the
        top-level one, or with :attr:`source` the one in a top-level class's body (a
        method, usually, rendered in a class of one line); its lines then come from
        the ``ast`` instead of rendering what comes before. A statement inside it (in a
        function's body) is rendered alone, and with :attr:`source` its line also
        comes from the ``ast`` (:meth:`_source_line`) instead of rendering the whole
        anchor. The answer is the same (a test compares them on every corpus).
        """
        if "positions" in self.__dict__:
            rng = self.positions[node]
            return rng.start.line, rng.start.column, rng.end.line, rng.end.column
        anchor, cls = self._anchor(node)
        if anchor is None:  # the module, its header ...
            rng = self.positions[node]
            return rng.start.line, rng.start.column, rng.end.line, rng.end.column
        shift = self._first_lines[id(anchor)] - (0 if cls is None else 1)
        inner = self._innermost_statement(node, anchor) if _KNOWN_LIBCST else anchor
        if inner is not anchor:
            # A statement inside the anchor (a function's, usually) is rendered alone,
            # in an `if _:` block indented as it is: its lines come from a plain
            # rendering of the anchor, which costs a third of the positions of all of it.
            ranges = self._statement_positions.get(id(inner))
            if ranges is None:
                ranges = self._statement_positions[id(inner)] = self._render(cst.If(
                    test=cst.Name("_"), body=cst.IndentedBlock(
                        body=[inner], indent=self._indentation(inner))))  # type: ignore
            start = self._source_line(inner, anchor)
            shift += (start - self._first_lines[id(anchor)] + (0 if cls is None else 1)
                      if start is not None else self._rendered_lines(anchor, cls)[id(inner)]) - 2
        else:
            ranges = self._statement_positions.get(id(anchor))
            if ranges is None:
                ranges = self._statement_positions[id(anchor)] = self._render(
                    self._rendered_anchor(anchor, cls))
        rng = ranges[node]
        return rng.start.line + shift, rng.start.column, rng.end.line + shift, rng.end.column

    def _source_line(self, inner: cst.CSTNode, anchor: cst.CSTNode) -> int | None:
        """The line (1-based) where ``inner``, a statement inside ``anchor``, starts (its
        leading lines first), from the ``ast`` of :attr:`source`: the statements on the
        way down from the anchor, each matched to the ``ast`` by its place in its block.
        Rendering the anchor for it (a whole ``main`` of a training script, say) cost more
        than the rest of the positions. None when the two trees do not match there."""
        statements = self._ast_statements
        node = statements.get(id(anchor)) if statements is not None else None
        if node is None:
            return None
        chain = []
        current: cst.CSTNode | None = inner
        while current is not anchor:
            if current is None:
                return None
            if isinstance(current, cst.BaseStatement):
                chain.append(current)
            current = self.parents.get(current)
        outer: cst.CSTNode = anchor
        for statement in reversed(chain):
            node = _ast_child(outer, node, statement, self.parents, self._blocks)
            if node is None:
                return None
            outer = statement
        return _first_line(statement, node) - _leading(statement, node)  # type: ignore

    @functools.cached_property
    def _ast_statements(self) -> dict[int, ast.stmt] | None:
        """The ``ast`` statement of each top-level statement and each statement of a
        top-level class's body (the first of a line of several), when :attr:`source`
        matches the module (as :meth:`_first_lines` uses it)."""
        if self.source is None or self.source.lines_before(self.module) is None:
            return None
        found: dict[int, ast.stmt] = {}
        for statement, node in zip(self.module.body, _statement_nodes(
                self.module.body, self.source.tree.body), strict=False):
            found[id(statement)] = node
            if isinstance(statement, cst.ClassDef) and isinstance(node, ast.ClassDef) and (
                isinstance(statement.body, cst.IndentedBlock)
            ):
                found.update((id(s), n) for s, n in zip(
                    statement.body.body, _statement_nodes(statement.body.body, node.body),
                    strict=False))
        return found

    def _rendered_anchor(self, anchor: cst.CSTNode, cls: cst.ClassDef | None) -> cst.CSTNode:
        """What is rendered for a statement's positions: itself, or, in a class body, a
        class of one line, `class _:`, with the class's own block, so that its lines keep
        their indentation."""
        if cls is None:
            return anchor
        return cst.ClassDef(name=cst.Name("_"), body=cls.body.with_changes(
            body=[anchor], footer=()))

    def _render(self, statement: cst.CSTNode) -> Mapping[cst.CSTNode, CodeRange]:
        return _positions(cst.Module(
            body=[statement], header=(), footer=(),  # type: ignore[list-item]
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline))

    def _innermost_statement(self, node: cst.CSTNode, anchor: cst.CSTNode) -> cst.CSTNode:
        """The statement nearest ``node`` (itself, or an ancestor) inside ``anchor``; for
        an ``elif`` (an ``If`` in another's ``orelse``, which renders as ``if`` alone), the
        ``if`` that starts the chain."""
        current: cst.CSTNode | None = node
        while current is not None and current is not anchor:
            if isinstance(current, cst.BaseStatement):
                parent = self.parents.get(current)
                while isinstance(current, cst.If) and isinstance(parent, cst.If):
                    current, parent = parent, self.parents.get(parent)
                return current  # type: ignore[return-value]
            current = self.parents.get(current)
        return anchor

    def _indentation(self, statement: cst.CSTNode) -> str:
        """The whole indentation of a statement: the indents of the blocks around it, and
        of the cases of a ``match`` (``Match.indent``), which sit between its block and
        the blocks of its cases."""
        indents = [block.indent if block.indent is not None else self.module.default_indent
                   for block in self.ancestors(statement)
                   if isinstance(block, (cst.IndentedBlock, cst.Match))]
        return "".join(reversed(indents))

    def _rendered_lines(self, anchor: cst.CSTNode, cls: cst.ClassDef | None) -> dict[int, int]:
        """The line (1-based) where each statement of ``anchor`` starts (its leading
        lines first) in the rendering of :meth:`_rendered_anchor`."""
        found = self._statement_lines.get(id(anchor))
        if found is None:
            state = _StatementLines(default_indent=self.module.default_indent,
                                    default_newline=self.module.default_newline)
            cst.Module(body=[self._rendered_anchor(anchor, cls)],  # type: ignore[list-item]
                       header=(), footer=())._codegen(state)
            found = self._statement_lines[id(anchor)] = state.lines
        return found

    def _anchor(self, node: cst.CSTNode) -> tuple[cst.CSTNode | None, cst.ClassDef | None]:
        """The statement to render for ``node``'s position, and the top-level class whose
        body holds it, if any (None, None when ``node`` is in no statement)."""
        path = [node]
        while path[-1] is not None and self.parents.get(path[-1]) is not self.module:
            path.append(self.parents.get(path[-1]))  # type: ignore[arg-type]
        top = path[-1]
        if top is None or id(top) not in self._first_lines:
            return None, None
        # path: node ... top; a method sits at top -> IndentedBlock -> statement.
        if len(path) >= 3 and isinstance(top, cst.ClassDef) and path[-2] is top.body and (
            id(path[-3]) in self._first_lines
        ):
            return path[-3], top
        return top, None

    @functools.cached_property
    def _first_lines(self) -> dict[int, int]:
        """How many lines come before each top-level statement in the rendered module
        (and, with :attr:`source`, before each statement of a top-level class's body)."""
        if self.source is not None:
            found = self.source.lines_before(self.module)
            if found is not None:
                return found
        lines = sum(1 for _ in self.module.header)
        found = {}
        for statement in self.module.body:
            found[id(statement)] = lines
            lines += len(_LINES.findall(self.module.code_for_node(statement)))
        return found

    # -- names -----------------------------------------------------------------------------

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """What a dotted name refers to (``{"torch.nn.functional.relu"}`` for ``F.relu``).

        Only plain chains of names count: LibCST names ``torch.zeros(3).sum`` as if it
        were ``torch.zeros.sum``, but a method of a call's result is no module function.
        """
        dotted = self._dotted_name(node)
        if dotted is None:
            return set()
        scope = self.scopes.get(node)
        if scope is None:
            return set()
        if isinstance(node, cst.Attribute) and not isinstance(self.parents.get(node),
                                                              cst.ImportAlias):
            accesses = scope._accesses_by_node.get(node)  # noqa: SLF001
            if accesses:
                # `a.b` of `import a.b`: LibCST names what this access reaches, which
                # depends on where it is (before a local `import a.b`, nothing).
                return {q.name for access in accesses for referent in access.referents
                        for q in referent.get_qualified_names_for(referent.name)}
            # Otherwise, outside an import, LibCST's answer for an attribute chain depends
            # on its scope and text alone, and costs a look at every binding of its first
            # name (``loss.item`` in a function that binds ``loss`` a thousand times):
            # remembered per scope and text.
            key = (id(scope), dotted)
            known = self._qualified.get(key)
            if known is None:
                parts = getattr(scope.globals, _IMPORT_PARTS, None)
                known = self._qualified[key] = frozenset(q.name for q in (
                    scope.get_qualified_names_for(node)
                    if parts is None or dotted.count(".") < _LONG_CHAIN
                    else _chain_qualified_names(scope, node, dotted, parts)))
            return set(known)
        return {q.name for q in scope.get_qualified_names_for(node)}

    def _dotted_name(self, node: cst.CSTNode) -> str | None:
        """:func:`dotted_name`, kept for each attribute: qualified names are asked of every
        attribute of a chain, and each would spell the chain below it again."""
        kind = type(node)
        if kind is cst.Name:
            return node.value  # type: ignore[attr-defined]
        if kind is not cst.Attribute:
            return None
        known = self._dotted.get(id(node), self)
        if known is self:
            base = self._dotted_name(node.value)  # type: ignore[attr-defined]
            known = self._dotted[id(node)] = (
                None if base is None else f"{base}.{node.attr.value}")  # type: ignore
        return known  # type: ignore[return-value]

    def scope(self, node: cst.CSTNode) -> Scope | None:
        return self.scopes.get(node)

    def access(self, name: cst.Name) -> Access | None:
        """The scope access record of a ``Name`` in load context, if any."""
        if self._accesses is None:
            index: dict[int, Access] = {}
            for scope in {s for s in self.scopes.values() if s is not None}:
                for access in scope.accesses:
                    index[id(access.node)] = access
            self._accesses = index
        return self._accesses.get(id(name))

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)


class Source:
    """Python's ``ast`` of a text with the same lines as the one LibCST parsed (the
    text itself, or a slice of it that keeps every line in place)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree

    def lines_before(self, module: cst.Module) -> dict[int, int] | None:
        """For each top-level statement of ``module`` and each statement in the body of
        a top-level class: how many lines come before it (its leading empty lines and
        comments included). None if the ``ast`` does not match the module."""
        found = _lines_before(module.body, self.tree.body)
        if found is None:
            return None
        for statement, node in zip(module.body, _statement_nodes(module.body, self.tree.body),
                                   strict=False):
            if isinstance(statement, cst.ClassDef) and isinstance(node, ast.ClassDef) and (
                isinstance(statement.body, cst.IndentedBlock)
            ):
                inner = _lines_before(statement.body.body, node.body)
                if inner is None:
                    return None
                found.update(inner)
        return found


def _statement_nodes(statements: Sequence[cst.BaseStatement],
                     nodes: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The first ``ast`` statement of each LibCST statement (a line of simple
    statements holds several)."""
    index = 0
    for statement in statements:
        if index >= len(nodes):
            return
        yield nodes[index]
        index += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1


def _lines_before(statements: Sequence[cst.BaseStatement],
                  nodes: list[ast.stmt]) -> dict[int, int] | None:
    found: dict[int, int] = {}
    count = 0
    for statement, node in zip(statements, _statement_nodes(statements, nodes), strict=False):
        decorators = getattr(node, "decorator_list", None)
        first = decorators[0].lineno if decorators else node.lineno
        leading = len(statement.leading_lines)
        if decorators and isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            leading += len(statement.decorators[0].leading_lines)
        found[id(statement)] = first - 1 - leading
        count += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return found if count == len(nodes) and len(found) == len(statements) else None


#: LibCST's compound statements and the ``ast`` types each can be.
_COMPOUND = {
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef), cst.ClassDef: (ast.ClassDef,),
    cst.If: (ast.If,), cst.For: (ast.For, ast.AsyncFor), cst.While: (ast.While,),
    cst.Try: (ast.Try,), cst.TryStar: (getattr(ast, "TryStar", ast.Try),),
    cst.With: (ast.With, ast.AsyncWith), cst.Match: (ast.Match,),
}


def _ast_child(outer: cst.CSTNode, node: ast.stmt, statement: cst.CSTNode,
               parents: Mapping[cst.CSTNode, cst.CSTNode],
               blocks: dict[int, dict[int, ast.stmt]]) -> ast.stmt | None:
    """The ``ast`` statement of ``statement``, which sits in a block of ``outer`` (whose
    ``ast`` statement is ``node``); None when the trees do not match. ``blocks`` keeps
    each block's statements matched, by the ``id`` of its LibCST block."""
    if not isinstance(node, _COMPOUND.get(type(outer), ())):
        return None
    holder = parents.get(statement)
    if isinstance(outer, cst.If) and holder is outer and outer.orelse is statement:  # elif
        orelse = node.orelse  # type: ignore[attr-defined]
        return orelse[0] if len(orelse) == 1 and isinstance(orelse[0], ast.If) else None
    if not isinstance(holder, cst.IndentedBlock):
        return None
    owner = parents.get(holder)
    if owner is outer:
        nodes = node.body  # type: ignore[attr-defined]
    elif parents.get(owner) is not outer:  # type: ignore[arg-type]
        return None
    elif isinstance(owner, cst.Else):
        nodes = node.orelse  # type: ignore[attr-defined]
    elif isinstance(owner, cst.Finally):
        nodes = node.finalbody  # type: ignore[attr-defined]
    elif isinstance(owner, (cst.ExceptHandler, cst.ExceptStarHandler)):
        handlers = outer.handlers  # type: ignore[attr-defined]
        index = next((i for i, h in enumerate(handlers) if h is owner), None)
        if index is None or len(handlers) != len(node.handlers):  # type: ignore[attr-defined]
            return None
        nodes = node.handlers[index].body  # type: ignore[attr-defined]
    elif isinstance(owner, cst.MatchCase):
        cases = outer.cases  # type: ignore[attr-defined]
        index = next((i for i, c in enumerate(cases) if c is owner), None)
        if index is None or len(cases) != len(node.cases):  # type: ignore[attr-defined]
            return None
        nodes = node.cases[index].body  # type: ignore[attr-defined]
    else:
        return None
    matched = blocks.get(id(holder))
    if matched is None:  # each block once: a function of n findings in one long block
        matched = blocks[id(holder)] = {} if sum(
            len(s.body) if isinstance(s, cst.SimpleStatementLine) else 1
            for s in holder.body) != len(nodes) else {
            id(candidate): found for candidate, found in zip(
                holder.body, _statement_nodes(holder.body, nodes), strict=False)}
    found = matched.get(id(statement))
    kinds = _COMPOUND.get(type(statement))
    return found if found is not None and (kinds is None or isinstance(found, kinds)) else None


def _first_line(statement: cst.CSTNode, node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None)
    return decorators[0].lineno if decorators else node.lineno


def _leading(statement: cst.CSTNode, node: ast.stmt) -> int:
    """The lines LibCST puts before ``statement``'s first line (comments, empty lines),
    counted as :func:`_lines_before` counts them."""
    leading = len(getattr(statement, "leading_lines", ()))
    if getattr(node, "decorator_list", None) and isinstance(statement,
                                                             (cst.FunctionDef, cst.ClassDef)):
        leading += len(statement.decorators[0].leading_lines)
    return leading


def _libcst_version() -> tuple[int, ...]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return tuple(int(part) for part in version("libcst").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return ()


#: The fast path below leans on LibCST internals (the wrapper's resolved metadata, the
#: providers' ``_computed``, the scope visitor's ``infer_accesses``); it is taken only on
#: the LibCST releases the tests compare it with. Any other release gets LibCST's own
#: ``wrapper.resolve``: slower, and right by construction.
_KNOWN_LIBCST = _libcst_version() == (1, 9)


def resolve_alone(wrapper: cst.MetadataWrapper,
                  provider: type[BatchableMetadataProvider[_T]]) -> Mapping[cst.CSTNode, _T]:
    """``wrapper.resolve(provider)`` for a provider that does all its work in
    ``visit_Module`` (``ScopeProvider`` and ``ExpressionContextProvider``), and its
    dependencies, without LibCST's batched traversal around each.

    LibCST resolves a batchable provider by a batched traversal of the whole tree
    that calls the provider's ``visit_Module``; both of these providers walk the
    tree again inside it, with their own visitor, and have no other method, so the
    outer traversal does nothing but cost a walk of every node (two per scope
    resolution). Scopes need no ``ExpressionContextProvider`` here: their visitor
    tells stored names itself (:class:`_ScopeVisitor`). The result is stored where
    ``wrapper.resolve`` keeps it.
    """
    if not _KNOWN_LIBCST:
        return wrapper.resolve(provider)
    resolved = wrapper._metadata  # noqa: SLF001 (LibCST keeps no public setter)
    if provider in resolved:
        return resolved[provider]  # type: ignore[return-value]
    instance = provider()
    if provider is ScopeProvider:
        # What its visit_Module does (a test checks it), by a walk of the visitor's own
        # that tells stored names itself: no ExpressionContextProvider to resolve first.
        with _no_rebuilding():
            visitor = _ScopeVisitor(instance)  # type: ignore[arg-type]
            visitor.walk(wrapper.module)
            visitor.infer_accesses()
            setattr(visitor.scope, _IMPORT_PARTS, visitor._import_parts)  # the GlobalScope
    else:
        for dependency in provider.METADATA_DEPENDENCIES:
            resolve_alone(wrapper, dependency)  # type: ignore[arg-type]
        with instance.resolve(wrapper), _no_rebuilding():
            if provider is ExpressionContextProvider:  # in one walk
                instance._computed.update(expression_contexts(wrapper.module))  # noqa: SLF001
            else:
                instance.visit_Module(wrapper.module)  # type: ignore[attr-defined]
    result = MappingProxyType(dict(instance._computed))  # noqa: SLF001
    resolved[provider] = result
    return result  # type: ignore[return-value]


def expression_contexts(module: cst.Module) -> dict[cst.CSTNode, ExpressionContext]:
    """What ``ExpressionContextProvider`` gives, from one walk with a stack instead of its
    visitor, which starts a new visitor (and so a new walk) for every target, attribute
    and subscript. Rule for rule the same (a test compares them on every corpus file):
    targets of assignments, loops, ``:=``, ``as``, parameters and definitions' names
    store, ``del`` deletes, the value of an attribute and a subscript's parts load,
    and the rest keeps the context around it."""
    found: dict[cst.CSTNode, ExpressionContext] = {}
    load, store = ExpressionContext.LOAD, ExpressionContext.STORE
    stack: list[tuple[cst.CSTNode | None, ExpressionContext]] = [(module, load)]
    pop, push = stack.pop, stack.append
    while stack:
        node, context = pop()
        if node is None:
            continue
        kind = type(node)
        if kind is cst.Name:
            found[node] = context
        elif kind is cst.Attribute:
            found[node] = context
            push((node.value, load))  # type: ignore[attr-defined]
        elif kind is cst.Subscript:
            found[node] = context
            push((node.value, load))  # type: ignore[attr-defined]
            for element in node.slice:  # type: ignore[attr-defined]
                push((element, load))
        elif kind is cst.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                push((target, store))
            push((node.value, context))  # type: ignore[attr-defined]
        elif kind is cst.AnnAssign or kind is cst.AugAssign or kind is cst.NamedExpr:
            push((node.target, store))  # type: ignore[attr-defined]
            push((getattr(node, "annotation", None), context))
            push((node.value, context))  # type: ignore[attr-defined]
        elif kind is cst.AsName:
            push((node.name, store))  # type: ignore[attr-defined]
        elif kind is cst.CompFor or kind is cst.For:
            push((node.target, store))  # type: ignore[attr-defined]
            for part in (("iter", "ifs", "inner_for_in") if kind is cst.CompFor
                         else ("iter", "body", "orelse")):
                value = getattr(node, part)
                for item in (value if type(value) is tuple or type(value) is list
                             else (value,)):
                    push((item, context))
        elif kind is cst.Del:
            push((node.target, ExpressionContext.DEL))  # type: ignore[attr-defined]
        elif kind is cst.ClassDef or kind is cst.FunctionDef:
            push((node.name, store))  # type: ignore[attr-defined]
            parts = ((node.body, *node.bases, *node.keywords, *node.decorators)  # type: ignore
                     if kind is cst.ClassDef else
                     (node.params, node.body, *node.decorators, node.returns))  # type: ignore
            for part in parts:
                push((part, context))
        elif kind is cst.Param:
            push((node.name, store))  # type: ignore[attr-defined]
            push((node.annotation, context))  # type: ignore[attr-defined]
            push((node.default, context))  # type: ignore[attr-defined]
        else:
            if kind is cst.Tuple or kind is cst.List or kind is cst.StarredElement:
                found[node] = context
            for child in children(node):
                push((child, context))
    return found


def _positions(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """``MetadataWrapper(module).resolve(PositionProvider)`` without what LibCST adds
    to it: a batched walk of the whole tree (rebuilding every node) with no provider
    to run, since ``PositionProvider`` is not batchable."""
    if not _KNOWN_LIBCST:
        return cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    provider = PositionProvider()
    provider._gen_impl(module)  # noqa: SLF001 (what its _gen does, less the wrapper)
    return provider._computed  # noqa: SLF001


class _FastDispatch(cst.CSTVisitor):
    """``CSTVisitor``'s dispatch to ``visit_<Node>``, ``leave_<Node>`` and the field hooks,
    with each look-up made once per visitor class and node type instead of formatting
    the name and calling ``getattr`` at every node and field. Same calls, same order
    (LibCST's empty stubs are skipped: they do nothing)."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        method = _method(type(self), "visit_", type(node), None)
        if method is None:
            return True
        return method(self, node) is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        method = _method(type(self), "leave_", type(original_node), None)
        if method is not None:
            method(self, original_node)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        method = _method(type(self), "visit_", type(node), attribute)
        if method is not None:
            method(self, node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        method = _method(type(self), "leave_", type(original_node), attribute)
        if method is not None:
            method(self, original_node)


_METHODS: dict[tuple[type, str, type, str | None], object] = {}


def _method(visitor: type, prefix: str, node: type, attribute: str | None):  # type: ignore
    key = (visitor, prefix, node, attribute)
    try:
        return _METHODS[key]
    except KeyError:
        name = f"{prefix}{node.__name__}" + (f"_{attribute}" if attribute is not None else "")
        found = getattr(visitor, name, None)
        if found is not None and getattr(found, "_is_no_op", False):
            found = None
        _METHODS[key] = found
        return found


#: The last names of the functions whose calls LibCST's ``ScopeVisitor.visit_Call`` treats
#: specially (their arguments are type hints).
_TYPING_CALLS = frozenset({"NewType", "TypeVar", "cast"})


class _ScopeVisitor(ScopeVisitor):
    """LibCST's ``ScopeVisitor``, walked by :meth:`walk` instead of LibCST's visit.

    Its methods are LibCST's, but ``visit_Call`` and ``visit_Name`` below do what
    LibCST's do with less asking (``_visit_import_alike`` notes the imports for the
    first), and :meth:`walk` does ``on_leave``'s work."""

    def __init__(self, provider: ScopeProvider) -> None:
        super().__init__(provider)
        #: Every name (and dotted prefix) an import has bound so far, in any scope.
        self._imported: set[str] = set()
        self._scopes = provider._computed  # noqa: SLF001 (what set_metadata writes)
        #: ``id`` of every name an assignment, a loop, ``as`` or ``:=`` stores to.
        self._stored: set[int] = set()
        #: The most parts of a dotted name an import has bound (see _IMPORT_PARTS).
        self._import_parts = 1

    def _visit_import_alike(self, node: cst.Import | cst.ImportFrom) -> bool:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = get_full_name_for_node(
                    alias.asname.name if alias.asname is not None else alias.name)
                if bound:
                    self._import_parts = max(self._import_parts, bound.count(".") + 1)
                while bound:
                    self._imported.add(bound)
                    bound = bound.rpartition(".")[0]
        return super()._visit_import_alike(node)

    def walk(self, node: cst.CSTNode) -> None:
        """``node.visit(self)``: the node's ``visit_<Node>``, its children (but
        :data:`TRIVIA`, in LibCST's order) unless that answers False, then what
        ``ScopeVisitor.on_leave`` does (the node's scope recorded, assignment-like nodes
        counted, ``leave_<Node>``). The visitor's methods walk parts themselves with
        ``part.visit(self)``, which :func:`_no_rebuilding` sends here too.

        A walk of its own because LibCST's, and even :func:`visit`, cost more than the
        scopes' own work: at every node they look up the methods, test for field hooks
        (the one this visitor has, on a class's bases, is never reached:
        ``visit_ClassDef`` walks the parts itself) and push the leave on a stack."""
        steps = _SCOPE_STEPS.get(type(node))
        if steps is None:
            steps = _scope_steps(type(node))
        enter, leave, assigns, targets = steps
        if targets is not None and self._ScopeVisitor__last_string_annotation is None:  # type: ignore
            self._store(targets(node))
        if enter is None or enter(self, node) is not False:
            for child in children(node):
                self.walk(child)
        self._scopes[node] = self.scope
        if assigns:
            self.scope._assignment_count += 1  # noqa: SLF001 (what LibCST's on_leave does)
        if leave is not None:
            leave(self, node)

    def _store(self, target: cst.CSTNode) -> None:
        """Marks the names that ``ExpressionContextProvider`` gives ``STORE`` in an
        assignment's target: those in it but in the value of an attribute or the parts
        of a subscript (``a``, ``b`` and ``c`` of ``a, [b, *c], d.e, f[g] = ...``)."""
        stack = [target]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is cst.Name:
                self._stored.add(id(node))
            elif kind is not cst.Attribute and kind is not cst.Subscript:
                stack.extend(children(node))

    def visit_Name(self, node: cst.Name) -> bool | None:
        """``ScopeVisitor.visit_Name``, without asking ``ExpressionContextProvider`` at
        every name: only ``STORE`` counts there (``LOAD``, ``DEL`` and no context are
        all accesses), and :meth:`walk` has marked those names. The names of a string
        annotation, parsed into a module of their own, have no context in LibCST: they
        are accesses, and :meth:`walk` marks nothing in them."""
        if id(node) in self._stored:
            self.scope.record_assignment(node.value, node)
            return None
        access = Access(
            node, self.scope,
            is_annotation=bool(self._ScopeVisitor__in_annotation_stack[-1]  # type: ignore
                               and not self._ScopeVisitor__ignore_annotation),  # type: ignore
            is_type_hint=bool(self._ScopeVisitor__in_type_hint_stack[-1]))  # type: ignore
        self._ScopeVisitor__deferred_accesses.append(DeferredAccess(  # type: ignore
            access=access,
            enclosing_attribute=self._ScopeVisitor__top_level_attribute_stack[-1],  # type: ignore
            enclosing_string_annotation=self._ScopeVisitor__last_string_annotation))  # type: ignore
        return None

    def visit_Call(self, node: cst.Call) -> bool | None:
        """``ScopeVisitor.visit_Call`` without asking the qualified names of a call that
        cannot be ``typing.NewType``, ``typing.TypeVar`` or ``typing.cast``.

        LibCST asks every call's qualified names, which looks at every binding of the
        function's first name (``loss.backward()`` in a function that binds ``loss`` a
        thousand times: quadratic). A local binding names ``prefix.f`` where ``f`` is the
        call's text, a builtin ``builtins.f``: only an import can give a ``typing.*`` name
        to a call whose last name is not NewType, TypeVar or cast. So a call whose last
        name is another and none of whose dotted prefixes an import has bound yet gets
        exactly what LibCST's method does for a call that is none of the three.
        """
        full = get_full_name_for_node(node)
        if full is None or (full.rpartition(".")[2] not in _TYPING_CALLS and not any(
            prefix in self._imported for prefix in _dotted_prefixes(full)
        )):
            self._ScopeVisitor__top_level_attribute_stack.append(None)  # type: ignore
            self._ScopeVisitor__in_type_hint_stack.append(False)  # type: ignore
            return True
        return super().visit_Call(node)

#: For each node type, what :meth:`_ScopeVisitor.walk` does with it: the visitor's
#: ``visit_<Node>`` and ``leave_<Node>`` (None for none), whether it is one of the
#: assignment-like nodes LibCST's ``on_leave`` counts (tested once per type:
#: ``isinstance`` against that tuple of thirteen classes goes through ``ABCMeta``), and
#: where it holds a target (None if nowhere).
_SCOPE_STEPS: dict[type, tuple[Callable[..., bool | None] | None, Callable[..., None] | None,
                               bool, Callable[[cst.CSTNode], cst.CSTNode] | None]] = {}

#: The targets of assignments, loops, ``as`` and ``:=``, as ``ExpressionContextProvider``
#: stores to them (:func:`expression_contexts`); a comprehension's first ``for``, whose
#: ``CompFor`` the scope visitor does not walk as a node.
_TARGETS: dict[type, Callable[[cst.CSTNode], cst.CSTNode]] = {
    cst.AssignTarget: operator.attrgetter("target"),
    cst.AnnAssign: operator.attrgetter("target"),
    cst.AugAssign: operator.attrgetter("target"),
    cst.NamedExpr: operator.attrgetter("target"),
    cst.AsName: operator.attrgetter("name"),
    cst.For: operator.attrgetter("target"),
    cst.CompFor: operator.attrgetter("target"),
    **dict.fromkeys(COMPREHENSIONS, operator.attrgetter("for_in.target")),
}


def _scope_steps(kind: type) -> tuple[Callable[..., bool | None] | None,
                                      Callable[..., None] | None, bool,
                                      Callable[[cst.CSTNode], cst.CSTNode] | None]:
    steps = _SCOPE_STEPS[kind] = (
        _method(_ScopeVisitor, "visit_", kind, None),  # type: ignore[assignment]
        _method(_ScopeVisitor, "leave_", kind, None),  # type: ignore[assignment]
        issubclass(kind, _ASSIGNMENT_LIKE_NODES), _TARGETS.get(kind))
    return steps


#: Chains of more dots than this are resolved by :func:`_chain_qualified_names`.
_LONG_CHAIN = 16
#: The attribute, on a module's ``GlobalScope``, holding the most parts of a dotted name an
#: import binds in it (``import a.b.c``: 3), noted by :class:`_ScopeVisitor`.
_IMPORT_PARTS = "_nosync_import_parts"


def _chain_qualified_names(scope: Scope, node: cst.Attribute, dotted: str,
                           import_parts: int) -> set[QualifiedName]:
    """``scope.get_qualified_names_for(node)`` for an attribute chain outside an import
    that is not itself an access, without LibCST's look-up of every prefix of the chain,
    longest first (a chain k deep costs k look-ups, and each attribute of it is asked:
    quadratic). Only an import binds a dotted name, so no prefix longer than
    ``import_parts`` can be bound: the look-ups start there. The rest is LibCST's method
    as it is."""
    parts = dotted.split(".")
    assignments: set[BaseAssignment] = set()
    for count in range(min(len(parts), import_parts), 0, -1):
        prefix = ".".join(parts[:count])
        if prefix in scope:
            assignments = scope[prefix]  # type: ignore[assignment]
            break
    for assignment in assignments:
        if isinstance(assignment, Assignment) and _is_assignment(node, assignment.node):
            return assignment.get_qualified_names_for(dotted)  # type: ignore[return-value]
    found: set[QualifiedName] = set()
    for assignment in assignments:
        found |= assignment.get_qualified_names_for(dotted)
    return found


def _dotted_prefixes(name: str) -> Iterator[str]:
    """``a.b.c``, ``a.b``, ``a``."""
    while name:
        yield name
        name = name.rpartition(".")[0]


def dotted_name(node: cst.CSTNode) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


def call_name(call: cst.Call) -> str | None:
    """The method or function name of a call: ``item`` for ``x.item()``, ``len`` for ``len(x)``."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return None


def method_receiver(call: cst.Call) -> cst.BaseExpression | None:
    """``x`` in ``x.m(...)``."""
    return call.func.value if isinstance(call.func, cst.Attribute) else None


def assignment_of(md: Metadata, target: cst.CSTNode | None) -> cst.Assign | None:
    """The ``... = value`` statement in which the name ``target`` is a whole target of its
    own (not unpacked from a tuple, not ``+=``, not ``for``), or None."""
    holder = md.parent(target) if isinstance(target, cst.Name) else None
    assign = md.parent(holder) if isinstance(holder, cst.AssignTarget) else None
    return assign if isinstance(assign, cst.Assign) else None


def sole_value(md: Metadata, name: cst.Name) -> cst.BaseExpression | None:
    """The value of ``NAME = value`` when that is the only binding of the name the use
    ``name`` refers to, in whatever scope binds it (a module's ``classes = ("cat",
    "dog")`` seen from a function), else None."""
    access = md.access(name)
    referents = list(access.referents) if access is not None else []
    if len(referents) != 1 or not isinstance(referents[0], Assignment) or len(
            referents[0].scope.assignments[referents[0].name]) != 1:
        return None
    assign = assignment_of(md, referents[0].node)
    return assign.value if assign is not None and len(assign.targets) == 1 else None


def positional_args(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def keyword_arg(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def compares_with_text(node: cst.Comparison) -> bool:
    """Whether a comparison has a string literal operand (``out == "forward_return"``):
    no tensor compares to text, so the result is a host bool whatever the other side is."""
    return any(isinstance(operand, (cst.SimpleString, cst.ConcatenatedString,
                                    cst.FormattedString))
               for operand in (node.left, *(c.comparator for c in node.comparisons)))


def strip_parens(node: cst.BaseExpression) -> cst.BaseExpression:
    """The same expression without its parentheses (for building new code)."""
    if getattr(node, "lpar", None):
        return node.with_changes(lpar=[], rpar=[])
    return node


class _StatementLines(CodegenState):
    """A plain rendering that notes the line where each statement starts."""

    def __init__(self, default_indent: str, default_newline: str) -> None:
        super().__init__(default_indent=default_indent, default_newline=default_newline)
        self.line = 1
        self.lines: dict[int, int] = {}

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            self.line += len(_NEWLINES.findall(value))

    def before_codegen(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.BaseStatement):
            self.lines[id(node)] = self.line


_NEWLINES = re.compile(r"\r\n?|\n")


class _TreeIndex:
    """Every node but :data:`TRIVIA` in source order, its parent and the :data:`INDEXED`
    nodes, from one :func:`walk`. The parents are exactly ``ParentNodeProvider``'s but
    for trivia (a test checks it), which asks every node for its ``children`` and so
    walks each node's fields twice.
    """

    def __init__(self) -> None:
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.nodes: dict[type, list[cst.CSTNode]] = {kind: [] for kind in INDEXED}
        self.order: list[cst.CSTNode] = []


def walk(root: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, cst.CSTNode | None]]:
    """Every node under ``root`` (itself first) but :data:`TRIVIA` with its parent, in
    the order a LibCST visitor visits them (a test checks it on every corpus file).

    A LibCST visitor rebuilds every node it leaves (``_visit_and_replace_children``
    makes a new one, validated, even when nothing changed) and looks up methods by
    name at each node and field: most of the cost of a walk. Here each node's
    children are read from its fields, in the order LibCST visits them (recorded
    once per node type, from LibCST itself).
    """
    stack: list[tuple[cst.CSTNode, cst.CSTNode | None]] = [(root, None)]
    pop, push = stack.pop, stack.append
    while stack:
        node, parent = pop()
        yield node, parent
        for child in reversed(children(node)):
            push((child, node))


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The children of a node but :data:`TRIVIA`, in the order a LibCST visitor visits
    them."""
    read = _READERS.get(type(node))
    if read is None:
        read = _READERS[type(node)] = _children_reader(node)
    return read(node)


#: A function per node type that lists a node's children (see :func:`_children_reader`).
_READERS: dict[type, Callable[[cst.CSTNode], list[cst.CSTNode]]] = {}


def _children_reader(node: cst.CSTNode) -> Callable[[cst.CSTNode], list[cst.CSTNode]]:
    """A function that lists the children of nodes of ``node``'s type, written for its
    fields: a field whose type hint admits only nodes that are not :data:`TRIVIA` (an
    ``expression: BaseExpression``, ``args: Sequence[Arg]``, ``orelse: Optional[Else]``)
    is read without testing what it holds; the others (``Union[Param, MaybeSentinel]``)
    item by item, as every field was before."""
    kind = type(node)
    fields = _WALKED_FIELDS.get(kind)
    if fields is None:
        _child_fields(node)
        fields = _WALKED_FIELDS[kind]
    try:
        hints = typing.get_type_hints(kind)
    except Exception:  # noqa: BLE001 - an unresolvable hint: test every field's value
        hints = {}
    lines = ["def children(node):", "    found = []"]
    for field in fields:
        shape = _shape(hints[field]) if field in hints else None
        if shape == "one":
            lines.append(f"    found.append(node.{field})")
        elif shape == "many":
            lines.append(f"    found.extend(node.{field})")
        elif shape == "optional":
            lines += [f"    value = node.{field}", "    if value is not None:",
                      "        found.append(value)"]
        else:
            lines.append(f"    _tested(node.{field}, found)")
    lines.append("    return found")
    namespace: dict[str, object] = {"_tested": _tested}
    exec("\n".join(lines) + "\n", namespace)  # noqa: S102 (our own text)
    return namespace["children"]  # type: ignore[return-value]


def _shape(hint: object) -> str | None:
    """"one" when a hint admits one node that is never :data:`TRIVIA`, "optional" when
    it admits that or None, "many" for a sequence of such nodes; else None."""
    if typing.get_origin(hint) is Sequence:
        return "many" if all(_never_trivia(a) for a in _alternatives(
            typing.get_args(hint)[0])) else None
    alternatives = _alternatives(hint)
    nodes = [a for a in alternatives if a is not type(None)]
    if not nodes or not all(_never_trivia(a) for a in nodes):
        return None
    return "one" if len(nodes) == len(alternatives) else "optional"


def _alternatives(hint: object) -> tuple[object, ...]:
    return typing.get_args(hint) if typing.get_origin(hint) is typing.Union else (hint,)


def _never_trivia(hint: object) -> bool:
    """A node class none of whose subclasses is :data:`TRIVIA`."""
    return isinstance(hint, type) and issubclass(hint, cst.CSTNode) and not any(
        issubclass(trivia, hint) for trivia in TRIVIA)


def _tested(value: object, found: list[cst.CSTNode]) -> None:
    """Adds to ``found`` what a field's ``value`` holds that :func:`walk` goes into."""
    is_node_type = _WALKED_TYPES.get
    kind = type(value)
    if kind is tuple or kind is list:
        for item in value:  # type: ignore[attr-defined]
            is_node = is_node_type(type(item))
            if is_node is None:
                is_node = _is_walked_type(type(item))
            if is_node:
                found.append(item)
        return
    is_node = is_node_type(kind)
    if is_node is None:
        is_node = _is_walked_type(kind)
    if is_node:
        found.append(value)  # type: ignore[arg-type]


def own_code_nodes(function: cst.FunctionDef, kinds: tuple[type[cst.CSTNode], ...], *,
                   in_lambdas: bool) -> list[cst.CSTNode]:
    """The nodes of ``kinds`` in ``function``'s own code (its decorators, defaults and
    body), in source order: not in functions or classes defined in it, nor, unless
    ``in_lambdas``, in lambdas. A walk of :func:`children`: rules that ask this of a
    training script's ``main`` in a loop pay neither LibCST's rebuilding walk nor a
    visitor class made at each call."""
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [function]
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            found.append(node)
        kind = type(node)
        if node is not function and (kind is cst.FunctionDef or kind is cst.ClassDef or (
                kind is cst.Lambda and not in_lambdas)):
            continue
        stack.extend(reversed(children(node)))
    return found


def visit(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a ``CSTVisitor``: the same calls of ``on_visit``
    (children skipped when it answers False), of the field hooks and of
    ``on_leave``, in the same order, except on :data:`TRIVIA`, which are not
    visited; without rebuilding every node (see
    :func:`walk`); LibCST's name look-ups of ``visit_<Node>``/``leave_<Node>`` are
    cached, and its field hooks are skipped for a visitor that has none. A test
    compares the calls with LibCST's on every corpus file.

    The look-ups are cached per visitor class, for good: give it instances of classes
    defined once (at module level), not of a class defined in a function, which is a
    new class at each call (see :func:`own_code_nodes` for gathering nodes)."""
    kind = type(visitor)
    plain = _PLAIN_VISITORS.get(kind)
    if plain is None:
        plain = _PLAIN_VISITORS[kind] = _is_plain_visitor(kind)
    hooks, default_visit, default_leave = plain
    # (what, node, field): 0 visit, 1 leave, 2 visit a field, 3 leave a field
    stack: list[tuple[int, cst.CSTNode, str | None]] = [(0, node, None)]
    pop, push = stack.pop, stack.append
    while stack:
        what, current, field = pop()
        if what == 1:
            if default_leave:
                method = _method(kind, "leave_", type(current), None)
                if method is not None:
                    method(visitor, current)
            else:
                visitor.on_leave(current)
            continue
        if what == 2:
            visitor.on_visit_attribute(current, field)  # type: ignore[arg-type]
            continue
        if what == 3:
            visitor.on_leave_attribute(current, field)  # type: ignore[arg-type]
            continue
        if default_visit:
            method = _method(kind, "visit_", type(current), None)
            descend = method is None or method(visitor, current) is not False
        else:
            descend = visitor.on_visit(current)
        push((1, current, None))
        if not descend:
            continue
        hooked = _hooked_fields(kind, type(current), current) if hooks else _NO_FIELDS
        if not hooked:
            for child in reversed(children(current)):
                push((0, child, None))
            continue
        for name in reversed(_FIELDS[type(current)]):
            value = getattr(current, name)
            if name == "format_spec" and value is None:
                continue  # LibCST does not visit a missing format_spec at all
            push((3, current, name))
            if type(value) is tuple or type(value) is list:
                for item in reversed(value):
                    if _is_walked(item):
                        push((0, item, None))
            elif _is_walked(value):
                push((0, value, None))
            push((2, current, name))


_PLAIN_VISITORS: dict[type, tuple[bool, bool, bool]] = {}
_NO_FIELDS: tuple[str, ...] = ()
_HOOKED: dict[tuple[type, type], tuple[str, ...]] = {}


def _hooked_fields(visitor: type, kind: type, node: cst.CSTNode) -> tuple[str, ...]:
    """The fields of ``kind`` whose hooks the visitor has (all of them, when it has
    its own ``on_visit_attribute`` or ``on_leave_attribute``): a field hook that only
    looks up a method the visitor does not have does nothing, and is skipped."""
    key = (visitor, kind)
    found = _HOOKED.get(key)
    if found is None:
        fields = _FIELDS.get(kind) or _child_fields(node)
        dispatching = {cst.CSTVisitor.on_visit_attribute, cst.CSTVisitor.on_leave_attribute,
                       _FastDispatch.on_visit_attribute, _FastDispatch.on_leave_attribute}
        if visitor.on_visit_attribute not in dispatching or (
            visitor.on_leave_attribute not in dispatching
        ):
            found = fields
        else:
            found = tuple(f for f in fields if _method(visitor, "visit_", kind, f) is not None
                          or _method(visitor, "leave_", kind, f) is not None)
            found = fields if found else _NO_FIELDS
        _HOOKED[key] = found
    return found


def _is_plain_visitor(kind: type) -> tuple[bool, bool, bool]:
    """(has field hooks, LibCST's own on_visit, LibCST's own on_leave)."""
    base = cst.CSTVisitor
    named = any("_" in name.partition("_")[2] for name in dir(kind)
                if name.startswith(("visit_", "leave_"))
                and not getattr(getattr(kind, name), "_is_no_op", False))
    dispatching = {base.on_visit_attribute, base.on_leave_attribute,
                   _FastDispatch.on_visit_attribute, _FastDispatch.on_leave_attribute}
    hooks = named or kind.on_visit_attribute not in dispatching or (
        kind.on_leave_attribute not in dispatching)
    return (hooks, kind.on_visit in (base.on_visit, _FastDispatch.on_visit),
            kind.on_leave is base.on_leave)


_ORIGINAL_VISIT = cst.CSTNode.visit


def _visit_without_rebuilding(self: cst.CSTNode, visitor: object) -> object:
    if type(visitor) is _ScopeVisitor:
        visitor.walk(self)
        return self
    if isinstance(visitor, cst.CSTVisitor):
        visit(self, visitor)
        return self  # what LibCST returns for a CSTVisitor: the node itself
    return _ORIGINAL_VISIT(self, visitor)  # type: ignore[arg-type]


@contextlib.contextmanager
def _no_rebuilding() -> Iterator[None]:
    """While LibCST's providers run: ``node.visit`` by :func:`visit` for visitors.

    Their visitors walk sub-trees themselves (``node.body.visit(self)``), so the
    walk has to be replaced where LibCST starts it. Transformers are untouched.
    """
    cst.CSTNode.visit = _visit_without_rebuilding  # type: ignore[method-assign]
    try:
        yield
    finally:
        cst.CSTNode.visit = _ORIGINAL_VISIT  # type: ignore[method-assign]


def _skip_validation(self: cst.CSTNode) -> None:
    """``CSTNode.__post_init__`` while LibCST's parser builds a tree (see :func:`parsing`)."""


_ORIGINAL_POST_INIT = cst.CSTNode.__post_init__


@contextlib.contextmanager
def parsing() -> Iterator[None]:
    """While LibCST's parser builds a tree of source that Python accepted: no node checks
    its own fields as it is made (LibCST's ``__post_init__``, about an eighth of the
    parse). The parser makes them from the source, which they match by construction; a
    comment of LibCST at that method proposes the same. Only on the LibCST release the
    tests compare this with (``tests/test_fast_paths.py``); a node made by anything else
    meanwhile (another thread building a rewrite) would go unchecked too, as nodes made
    by nosync-fix's own rewrites are checked by the compile of the fixed text."""
    if not _KNOWN_LIBCST:
        yield
        return
    cst.CSTNode.__post_init__ = _skip_validation  # type: ignore[method-assign]
    try:
        yield
    finally:
        cst.CSTNode.__post_init__ = _ORIGINAL_POST_INIT  # type: ignore[method-assign]


def _trivia() -> frozenset[type[cst.CSTNode]]:
    from libcst._nodes import op, whitespace

    return frozenset(
        value for module in (op, whitespace) for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, cst.CSTNode)
        and value.__module__ == module.__name__
    ) | {cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
         cst.LeftCurlyBrace, cst.RightCurlyBrace}


#: Whitespace, comments, newlines, punctuation (commas, dots, colons, brackets) and
#: operator tokens (``+``, ``not``, ``==``, ``+=``): a third to a half of a module's
#: nodes, which hold nothing but more of them. No provider and no rule has a method
#: for them or asks about them (they read ``node.operator`` and the like from the
#: node that holds them), so :func:`walk`, :func:`visit` and :func:`children` leave
#: them out; a test checks that no rule visits one.
TRIVIA = _trivia()

#: Whether :func:`walk` goes into nodes of a type: node types but :data:`TRIVIA`
#: (``isinstance`` on LibCST's abstract base is slow).
_WALKED_TYPES: dict[type, bool] = dict.fromkeys(TRIVIA, False)


def _is_walked_type(kind: type) -> bool:
    _WALKED_TYPES[kind] = found = issubclass(kind, cst.CSTNode) and kind not in TRIVIA
    return found


def _is_walked(value: object) -> bool:
    found = _WALKED_TYPES.get(type(value))
    return _is_walked_type(type(value)) if found is None else found


#: The fields of each node type that hold children, in the order LibCST visits them.
_FIELDS: dict[type, tuple[str, ...]] = {}
#: Those of them that may hold a node other than :data:`TRIVIA` (by their type hints):
#: :func:`children` does not read ``whitespace_after``, ``lpar``, ``comma``...
_WALKED_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(node: cst.CSTNode) -> tuple[str, ...]:
    """The fields LibCST's ``_visit_and_replace_children`` visits, in its order, which
    depends on the type alone; except that the ``format_spec`` of an f-string's
    expression is visited (last) only when there is one."""
    recorder = _FieldOrder(node)
    _ORIGINAL_VISIT(node, recorder)  # LibCST's own walk, even inside _no_rebuilding
    fields = tuple(dict.fromkeys(recorder.fields))
    if "format_spec" in getattr(type(node), "__dataclass_fields__", ()) and (
        "format_spec" not in fields
    ):
        fields += ("format_spec",)
    _FIELDS[type(node)] = fields
    _WALKED_FIELDS[type(node)] = _fields_beyond_trivia(type(node), fields)
    return fields


def _fields_beyond_trivia(kind: type, fields: tuple[str, ...]) -> tuple[str, ...]:
    try:
        hints = typing.get_type_hints(kind)
    except Exception:  # noqa: BLE001 - an unresolvable hint: read every field
        return fields
    return tuple(f for f in fields if f not in hints or not _only_trivia(hints[f]))


def _only_trivia(hint: object) -> bool:
    """Whether every node type a type hint admits is :data:`TRIVIA` (``Comma``,
    ``Sequence[LeftParen]``, ``BaseParenthesizableWhitespace | MaybeSentinel``)."""
    arguments = typing.get_args(hint)
    if arguments:
        return all(_only_trivia(a) for a in arguments if a is not type(None))
    if isinstance(hint, type) and issubclass(hint, cst.CSTNode):
        return hint in TRIVIA
    return hint is cst.MaybeSentinel


class _FieldOrder(cst.CSTVisitor):
    def __init__(self, root: cst.CSTNode) -> None:
        super().__init__()
        self.root = root
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node is self.root

    def on_leave(self, original_node: cst.CSTNode) -> None:
        pass

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if node is self.root:
            self.fields.append(attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass
