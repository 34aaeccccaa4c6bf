"""The engine's shortcuts give exactly what the slow way gives.

* ``Metadata.parents`` equals LibCST's ``ParentNodeProvider``;
* ``Metadata.qualified_names`` equals what ``QualifiedNameProvider`` answers
  (for the dotted names it is asked about);
* ``Metadata.position`` (one top-level statement at a time, or with the
  ``ast`` one statement of a class body) equals ``PositionProvider`` on the
  whole module;
* ``line_opcodes`` is a valid edit script, like difflib's;
* ``expression_contexts`` (one walk) equals ``ExpressionContextProvider``;
* ``Metadata.scopes`` (resolved without LibCST's outer batched walk, by LibCST's
  scope visitor walked by a walk of its own) describes the same scopes, assignments
  (with their order and references), accesses (with their flags and referents) and
  ``global``/``nonlocal`` declarations as ``wrapper.resolve(ScopeProvider)``, those
  of string annotations included;
* ``walk`` yields the nodes, with their parents, in the order of a LibCST visitor,
  and ``visit`` makes a visitor's calls as ``node.visit`` does, both but for
  ``TRIVIA`` (whitespace, punctuation, operator tokens), which hold only more
  trivia and which no provider's visitor and no rule visits;
* the engine's ``visit_batched`` calls the rules' methods that LibCST's would, on
  the same nodes and in the same order.
"""

from __future__ import annotations

import ast
import functools
import inspect
import types
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from libcst.metadata import (
    ExpressionContextProvider,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from nosync_fix import syntax
from nosync_fix.analysis import ModuleAnalysis
from nosync_fix.analysis.base import (
    _ORIGINAL_VISIT,
    _WALKED_FIELDS,
    TRIVIA,
    Metadata,
    Source,
    _tested,
    children,
    dotted_name,
    expression_contexts,
    own_code_nodes,
    parsing,
    resolve_alone,
    visit,
    walk,
)
from nosync_fix.config import Settings
from nosync_fix.engine import (
    _visitor_methods,
    line_opcodes,
    nesting_depth,
    process_source,
    visit_batched,
)
from nosync_fix.rules import RuleContext, all_rules

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(list((ROOT / "golden").rglob("*.py"))
               + list((ROOT / "tests" / "analysis" / "labelled").glob("*.py"))
               + list((ROOT / "src" / "nosync_fix").rglob("*.py")))
ODD = [
    "import torch\r\nx = 1\r\n\r\ndef f():\r\n    return x\r\n",
    "x = 1\ny = 2\r\nif x:\r    z = 3\n",
    "\x0c\ndef f():\n    x = 1\n\x0c\n    return x\n",
    "# header\n\n\nclass A:\n    def f(self):\n        pass\n# footer\n",
    "class A:\n  # lead\n\n  @staticmethod\n  # between\n  @other(1,\n         2)\n"
    "  def f(x):\n    return g(x,\n             y.item())\n  x = 1; y = [\n    2]\n"
    "  z = 3\n",
    "class B(object):\n\tdef f(self):\n\t\tif self.t.item() > 0:  # c\n\t\t\tpass\n"
    "\t\t# trailing\n\n\t# end of class\nx = 'é'; y = B()\n",
    "x = 1",
    "\ufeffx = 1\n",
    # Names stored to in every way ExpressionContextProvider knows, and in string
    # annotations, which LibCST parses into modules of their own with no contexts.
    "import typing\nfrom typing import List\na, [b, *c], d.e, f[g] = h\ni: int = 1\n"
    "j += 1\nfor k, (l, m.n) in o:\n    pass\nwith p as (q, r[s]):\n    pass\n"
    "try:\n    pass\nexcept E as t:\n    pass\nu = [v for v in w if (x := v) for y in v]\n"
    "z = {k2: v2 for k2, v2 in w}\ndef f(a1: 'List[a1]', a2: '[b2 for b2 in c2]') -> 'x':\n"
    "    global i\n    i = a1\n    def g():\n        nonlocal a2\n        a2 = 1\n"
    "T = typing.TypeVar('T', bound='List[int]')\nc3 = typing.cast('List[d3]', e3)\n"
    "del a, d.e\nmatch z:\n    case {'k': [p1, *p2]} | p3 if p3:\n        pass\n",
    # typing's cast, NewType and TypeVar under other names: their arguments are type hints
    "from typing import cast as c, NewType as N\nimport typing as t\n"
    "x = c('List[a]', b)\nY = N('Y', 'List[d]')\nZ = t.TypeVar('Z', bound='e')\n",
    # Dotted imports: a prefix an import binds, shadowed below it by a local name; and a
    # chain read before the import that binds it (an access with no referent).
    "import a.b\ndef f():\n    a = 1\n    return a.b.c.d\n"
    "def g():\n    x = p.q.r.s\n    import p.q\n    return p.q.r\n",
]


def _sources() -> list[tuple[str, str]]:
    return [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in FILES] + [
        (f"odd{i}", text) for i, text in enumerate(ODD)]


SOURCES = _sources()
#: Every other source, and all the odd ones.
HALF = SOURCES[::2] + [s for s in SOURCES[1::2] if s[0].startswith("odd")]


@pytest.mark.parametrize("name, source", SOURCES, ids=[n for n, _ in SOURCES])
def test_metadata_shortcuts_equal_libcst_providers(name: str, source: str) -> None:
    module = cst.parse_module(source)
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    md = Metadata(wrapper)
    parents = wrapper.resolve(ParentNodeProvider)
    assert dict(md.parents) == {n: p for n, p in parents.items() if type(n) not in TRIVIA}
    qualified = wrapper.resolve(QualifiedNameProvider)
    for node in parents:
        if dotted_name(node) is not None:
            expected = qualified.get(node, set())
            if callable(expected):
                expected = expected()
            assert md.qualified_names(node) == {q.name for q in expected}
    full = wrapper.resolve(PositionProvider)
    # Trivia have no parent here: their positions come from the provider (no finding
    # is ever on one); the other nodes' from their statement alone.
    in_body = {id(n) for statement in module.body for n in _subtree(statement)
               if type(n) not in TRIVIA}
    lazy = Metadata(wrapper)
    for node in [n for n in parents if id(n) in in_body][::3]:
        rng = full[node]
        assert lazy.position(node) == (rng.start.line, rng.start.column, rng.end.line,
                                       rng.end.column), (name, type(node).__name__)
    assert "positions" not in lazy.__dict__  # it never needed the whole-module provider
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a byte-order mark: Python's own reading drops it first
        tree = None
    if tree is not None:
        with_ast = Metadata(wrapper, Source(tree))
        assert with_ast._first_lines.keys() >= {id(s) for s in module.body}
        for node in [n for n in parents if id(n) in in_body]:
            rng = full[node]
            assert with_ast.position(node) == (rng.start.line, rng.start.column,
                                               rng.end.line, rng.end.column), (
                name, type(node).__name__)
        assert "positions" not in with_ast.__dict__
        # and the lines of statements inside functions from the `ast`, without rendering
        assert not with_ast._statement_lines, name
    other = Metadata(wrapper)  # the header's and footer's comments: the provider's answer
    for node in [n for n in parents if id(n) not in in_body]:
        if node not in full:  # whitespace LibCST does not render (in a `case {...}`)
            continue
        rng = full[node]
        assert other.position(node) == (rng.start.line, rng.start.column, rng.end.line,
                                        rng.end.column)


@pytest.mark.parametrize("name, source", HALF, ids=[n for n, _ in HALF])
def test_qualified_names_of_long_chains_equal_libcst(name: str, source: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Every attribute chain, however short, resolved the way long ones are (looking up
    no prefix longer than the longest dotted name an import binds), gives LibCST's
    qualified names."""
    import nosync_fix.analysis.base as base

    monkeypatch.setattr(base, "_LONG_CHAIN", 0)
    module = cst.parse_module(source)
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    md = Metadata(wrapper)
    qualified = wrapper.resolve(QualifiedNameProvider)
    for node in md.walk_order:
        if isinstance(node, cst.Attribute) and dotted_name(node) is not None:
            expected = qualified.get(node, set())
            if callable(expected):
                expected = expected()
            assert md.qualified_names(node) == {q.name for q in expected}, (name, node)


def test_a_finding_in_a_case_block_is_at_its_column() -> None:
    """The cases of a ``match`` have an indentation of their own (``Match.indent``),
    between the ``match``'s block and each case's: a statement rendered alone for its
    position is indented by all three (it was one short, four columns to the left)."""
    source = (
        "import torch\n\n\n"
        "def train(model, loader, mode):\n"
        "    total = 0.0\n"
        "    for x in loader:\n"
        "        loss = model(x)\n"
        "        match mode:\n"
        "            case 'sum':\n"
        "                total += loss.item()\n"
        "    return total\n")
    findings = process_source(source, "train.py", Settings(), fix=False).findings
    assert [(f.code, f.line, f.column) for f in findings] == [("NSY201", 10, 17)]


def _subtree(node: cst.CSTNode) -> list[cst.CSTNode]:
    found = [node]
    for child in node.children:
        found.extend(_subtree(child))
    return found


def _trivia_ids(module: cst.Module) -> set[int]:
    return {id(n) for n in _subtree(module) if type(n) in TRIVIA}


@pytest.mark.parametrize("name, source", SOURCES, ids=[n for n, _ in SOURCES])
def test_trivia_hold_only_trivia(name: str, source: str) -> None:
    for node in _subtree(cst.parse_module(source)):
        if type(node) in TRIVIA:
            assert all(type(n) in TRIVIA for n in _subtree(node)), type(node).__name__


def test_no_visitor_of_the_analysis_handles_trivia() -> None:
    """What skipping them relies on: no rule, and no visitor of LibCST's providers
    that the analysis resolves, has a method for a trivia node or its fields."""
    from libcst.metadata.expression_context_provider import ExpressionContextVisitor
    from libcst.metadata.scope_provider import ScopeVisitor

    names = {kind.__name__ for kind in TRIVIA}
    assert {"Comma", "SimpleWhitespace", "Comment", "Add", "Not", "LeftParen"} <= names
    for visitor in (*all_rules(), ScopeVisitor, ExpressionContextVisitor):
        for attribute in dir(visitor):
            if attribute.startswith(("visit_", "leave_")) and not getattr(
                getattr(visitor, attribute), "_is_no_op", False  # LibCST's empty stubs
            ):
                assert attribute.split("_")[1] not in names, (visitor, attribute)


def _check_script(a: list[str], b: list[str]) -> None:
    i = j = 0
    for tag, i1, i2, j1, j2 in line_opcodes(a, b):
        assert (i1, j1) == (i, j)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))


LINES = st.lists(st.sampled_from(["\n", "    pass\n", "x = 1\n", "y = 2\n", "# c\n",
                                  "return x\n", "z\n"]), max_size=60)


@settings(max_examples=300, deadline=None)
@given(LINES, LINES)
def test_line_opcodes_is_an_edit_script(a: list[str], b: list[str]) -> None:
    _check_script(a, b)


@settings(max_examples=100, deadline=None)
@given(LINES, st.lists(st.tuples(st.integers(0, 59), st.sampled_from(["new\n", "\n", None]))))
def test_line_opcodes_on_local_edits_of_long_files(a: list[str], edits) -> None:
    import nosync_fix.engine as engine

    a = a * 40  # long, repetitive: the case difflib handles in quadratic time
    b = list(a)
    for position, line in edits:
        if position < len(b):
            if line is None:
                del b[position]
            else:
                b.insert(position, line)
    limit = engine._DIRECT_MATCH_LIMIT
    try:
        engine._DIRECT_MATCH_LIMIT = 10  # force the anchored path
        _check_script(a, b)
    finally:
        engine._DIRECT_MATCH_LIMIT = limit
    _check_script(a, b)


def test_line_opcodes_keep_unchanged_lines_equal() -> None:
    a = [f"line {i}\n" for i in range(2000)] + ["\n"] * 2000
    b = a[:1000] + ["inserted\n"] + a[1000:]
    ops = line_opcodes(a, b)
    assert [op[0] for op in ops] == ["equal", "replace", "equal"]
    assert ops[1] == ("replace", 1000, 1000, 1000, 1001)


def test_rule_methods_are_those_libcst_gathers() -> None:
    module = cst.parse_module("x = 1\n")
    context = RuleContext(ModuleAnalysis(cst.MetadataWrapper(module)), Settings())
    for rule in all_rules():
        names, field_hooks = _visitor_methods(rule)
        assert names == tuple(sorted(rule(context).get_visitors())), rule.code
        assert not field_hooks and not rule.METADATA_DEPENDENCIES, rule.code


@pytest.mark.parametrize("name, source", SOURCES[::3], ids=[n for n, _ in SOURCES[::3]])
def test_engine_visit_batched_makes_libcst_calls(name: str, source: str) -> None:
    """Each rule method is called on the same nodes in the same order (recorded
    around the real methods, so the analysis sees the same questions too)."""

    def run(ours: bool, listed: bool = False) -> list[tuple[str, str, int]]:
        module = cst.parse_module(source)
        wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
        analysis = ModuleAnalysis(wrapper)
        context = RuleContext(analysis, Settings())
        calls: list[tuple[str, str, int]] = []
        order = {id(n): i for i, n in enumerate(_subtree(module))}
        rules = [rule(context) for rule in all_rules()]
        def recorder(rule: object, method: str) -> types.MethodType:
            real = getattr(rule, method)

            def record(self: object, node: cst.CSTNode) -> None:
                calls.append((type(rule).code, method, order[id(node)]))  # type: ignore
                real(node)
            record.__name__ = method  # LibCST gathers bound methods by name
            return types.MethodType(record, rule)

        for rule in rules:
            for method in _visitor_methods(type(rule))[0]:
                setattr(rule, method, recorder(rule, method))
        if ours:
            visit_batched(wrapper, rules, analysis.md.walk_order if listed else None)
        else:
            wrapper.visit_batched(rules)
        return calls

    ours, libcsts = run(True), run(False)
    assert ours == libcsts
    assert run(True, listed=True) == libcsts  # the nodes listed by the analysis
    # ast.parse takes a str without the byte order mark that LibCST accepts (odd7).
    tree = ast.parse(source.removeprefix("\ufeff"))
    calls_in_source = any(isinstance(n, ast.Call) for n in ast.walk(tree))
    assert ours or not calls_in_source  # a call or more: some rule visits it


def test_scope_providers_work_in_visit_module_alone() -> None:
    """What ``resolve_alone`` relies on: no other visit or leave method, and a
    ``visit_Module`` that does what it does in their place."""
    for provider in (ScopeProvider, ExpressionContextProvider):
        own = {name for klass in provider.__mro__ if klass.__module__.startswith(
            "libcst.metadata") for name, value in vars(klass).items()
            if name.startswith(("visit_", "leave_")) and callable(value)}
        assert own == {"visit_Module"}, provider
    body = [line.strip() for line in inspect.getsource(ScopeProvider.visit_Module)
            .splitlines()[1:] if line.strip()]
    assert body == ["visitor = ScopeVisitor(self)", "node.visit(visitor)",
                    "visitor.infer_accesses()"]
    body = [line.strip() for line in inspect.getsource(ExpressionContextProvider.visit_Module)
            .splitlines()[1:] if line.strip()]
    assert body == ["node.visit(ExpressionContextVisitor(self, ExpressionContext.LOAD))"]


def _scope_summary(scopes, module: cst.Module) -> tuple[dict[int, object],
                                                       dict[object, object]]:
    """Which scope each node is in, and each scope's assignments and accesses, by node.

    Nodes outside the module (LibCST parses string annotations into new ones on
    each run) are counted, not named; their scopes are described too."""
    known = {id(n) for n in _subtree(module)}

    def ident(node: object) -> object:
        return id(node) if id(node) in known else type(node).__name__

    def key(scope) -> object:
        return (type(scope).__name__, scope._name_prefix, ident(getattr(scope, "node", None)))

    where: dict[object, object] = {}
    described: dict[object, object] = {}
    for node, scope in scopes.items():
        if id(node) not in known:
            where[type(node).__name__] = where.get(type(node).__name__, 0) + 1  # type: ignore
        else:
            where[id(node)] = None if scope is None else key(scope)
        if scope is not None and key(scope) not in described:
            described[key(scope)] = (
                sorted((a.name, type(a).__name__, str(ident(getattr(a, "node", None))),
                        getattr(a, "_Assignment__index", -1),  # their order in the scope
                        sorted(str(ident(r.node)) for r in a.references))
                       for a in scope.assignments),
                sorted((str(ident(a.node)), a.is_annotation, a.is_type_hint,
                        a._index, str(key(a.scope)),
                        sorted(str(ident(getattr(r, "node", None))) for r in a.referents))
                       for a in scope.accesses),
                sorted((name, str(key(other)))
                       for name, other in getattr(scope, "_scope_overwrites", {}).items()))
    return where, described


@pytest.mark.parametrize("name, source", HALF, ids=[n for n, _ in HALF])
def test_scopes_resolved_alone_equal_libcst(name: str, source: str) -> None:
    module = cst.parse_module(source)
    ours = resolve_alone(cst.MetadataWrapper(module, unsafe_skip_copy=True), ScopeProvider)
    theirs = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    theirs = {n: s for n, s in theirs.items() if type(n) not in TRIVIA}
    assert _scope_summary(ours, module) == _scope_summary(theirs, module)
    assert len(ours) == len(theirs)
    contexts = resolve_alone(cst.MetadataWrapper(module, unsafe_skip_copy=True),
                             ExpressionContextProvider)
    assert dict(contexts) == dict(
        cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(ExpressionContextProvider))
    assert cst.CSTNode.visit is _ORIGINAL_VISIT  # LibCST's walk is back


class _Order(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[int, int | None]] = []
        self.stack: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) in TRIVIA:
            return False
        self.seen.append((id(node), id(self.stack[-1]) if self.stack else None))
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if type(original_node) not in TRIVIA:
            self.stack.pop()


@pytest.mark.parametrize("name, source", SOURCES, ids=[n for n, _ in SOURCES])
def test_walk_visits_in_libcst_order(name: str, source: str) -> None:
    module = cst.parse_module(source)
    order = _Order()
    module.visit(order)
    assert [(id(n), None if p is None else id(p)) for n, p in walk(module)] == order.seen


class _Events(cst.CSTVisitor):
    """Records its calls; does not descend into lambdas and calls' arguments."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, int]] = []

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.events.append(("lambda", id(node)))
        return False

    def visit_Arg(self, node: cst.Arg) -> bool | None:
        self.events.append(("arg", id(node)))
        return False if isinstance(node.value, cst.Call) else None

    def leave_Name(self, original_node: cst.Name) -> None:
        self.events.append(("leave name", id(original_node)))


class _OwnOnVisit(_Events):
    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append(("visit", id(node)))
        return not isinstance(node, cst.Subscript) and super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.events.append(("leave", id(original_node)))
        super().on_leave(original_node)


class _FieldHooks(_Events):
    def visit_Call_args(self, node: cst.Call) -> None:
        self.events.append(("args", id(node)))

    def leave_ClassDef_bases(self, original_node: cst.ClassDef) -> None:
        self.events.append(("bases", id(original_node)))


class _OwnFieldHooks(_Events):
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.events.append((attribute, id(node)))

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        self.events.append(("/" + attribute, id(original_node)))


@pytest.mark.parametrize("name, source", SOURCES, ids=[n for n, _ in SOURCES])
def test_visit_makes_libcst_calls(name: str, source: str) -> None:
    module = cst.parse_module(source)
    trivia = _trivia_ids(module)
    for kind in (_Events, _OwnOnVisit, _FieldHooks, _OwnFieldHooks):
        ours, theirs = kind(), kind()
        visit(module, ours)
        module.visit(theirs)
        assert ours.events == [e for e in theirs.events if e[1] not in trivia]
        assert ours.events


@pytest.mark.parametrize("name, source", SOURCES, ids=[n for n, _ in SOURCES])
def test_parsing_without_node_checks_builds_libcst_s_tree(name: str, source: str) -> None:
    with parsing():
        unchecked = cst.parse_module(source)
    checked = cst.parse_module(source)
    assert unchecked.deep_equals(checked)
    assert unchecked.code == checked.code


def test_nodes_are_checked_again_after_parsing() -> None:
    with parsing():
        cst.Name("")  # no check while the parser runs
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    with pytest.raises(ValueError), parsing():
        raise ValueError("a failed parse")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


def test_unknown_libcst_release_checks_every_node(monkeypatch: pytest.MonkeyPatch) -> None:
    import nosync_fix.analysis.base as base

    monkeypatch.setattr(base, "_KNOWN_LIBCST", False)
    with pytest.raises(cst.CSTValidationError), parsing():
        cst.Name("")


def test_unknown_libcst_release_takes_libcst_own_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a LibCST release the fast path was not tested with, scopes come from LibCST's
    own ``wrapper.resolve``, and the findings are the same."""
    import nosync_fix.analysis.base as base
    from nosync_fix.engine import process_source

    source = (ROOT / "examples" / "evaluate.py").read_text(encoding="utf-8")
    fast = process_source(source, "evaluate.py", Settings(unsafe_fixes=True), fix=True)
    calls: list[object] = []
    original = cst.MetadataWrapper.resolve
    monkeypatch.setattr(base, "_KNOWN_LIBCST", False)
    monkeypatch.setattr(cst.MetadataWrapper, "resolve",
                        lambda self, p: calls.append(p) or original(self, p))
    slow = process_source(source, "evaluate.py", Settings(unsafe_fixes=True), fix=True)
    assert ScopeProvider in calls
    assert (slow.fixed, slow.findings) == (fast.fixed, fast.findings)


def _depth_one_node_at_a_time(tree: ast.AST) -> int:
    deepest = 0
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.BoolOp):
            depth += len(node.values) - 1
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node)
                     if not isinstance(child, MARKERS))
    return deepest


MARKERS = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


@pytest.mark.parametrize("name, source", SOURCES, ids=[n for n, _ in SOURCES])
def test_ast_children_and_walks_are_python_s_less_markers(name: str, source: str) -> None:
    if source.startswith("\ufeff"):
        source = source[1:]  # Python's own reading drops it first
    tree = ast.parse(source)
    assert syntax.MARKERS == MARKERS
    for node in ast.walk(tree):
        assert syntax.children(node) == [
            c for c in ast.iter_child_nodes(node) if not isinstance(c, MARKERS)]
    walked = [n for n in ast.walk(tree) if not isinstance(n, MARKERS)]
    assert sorted(map(id, syntax.walk(tree))) == sorted(map(id, walked))
    assert sorted(map(id, syntax.statements(tree))) == sorted(
        id(n) for n in walked if isinstance(n, (ast.Module, ast.stmt, ast.excepthandler,
                                                ast.match_case)))


@pytest.mark.parametrize("source", [
    "d = {**a, 'k': v, **b}\n",  # None among a dict's keys
    "def f(a, /, b=1, *c, d, e=2, **g) -> None:\n    return\n",  # None among kw_defaults
    "def f(*, d):\n    yield\n",
    "match x:\n    case {'a': 1, **rest} if rest: pass\n    case [1, *others]: pass\n",
    "try:\n    pass\nexcept* E as e:\n    raise\n",
    "x = a if b else c\nlambda: (yield)\n[y async for y in z]\n",
])
def test_ast_children_of_optional_and_none_holding_fields(source: str) -> None:
    for node in ast.walk(ast.parse(source)):
        assert syntax.children(node) == [
            c for c in ast.iter_child_nodes(node) if not isinstance(c, MARKERS)]


def test_every_ast_node_type_has_a_reader_written_for_its_fields() -> None:
    # The docstrings name the fields on every supported Python; a class whose
    # docstring did not would be read by the slow loop (still right, but slow).
    kinds = [k for k in vars(ast).values()
             if isinstance(k, type) and issubclass(k, ast.AST) and k._fields
             and not (issubclass(k, ast.Constant) and k is not ast.Constant)]  # ast.Num...
    assert len(kinds) > 60
    for kind in kinds:
        assert not isinstance(syntax._children_reader(kind), functools.partial), kind


@pytest.mark.parametrize("source", [s for _, s in SOURCES if not s.startswith("\ufeff")] + [
    "x = a and b and (c or d or e) and f\n", "y = not (a and b) + [c or d][0]\n"])
def test_nesting_depth_level_by_level(source: str) -> None:
    tree = ast.parse(source)
    assert nesting_depth(tree) == _depth_one_node_at_a_time(tree)


@pytest.mark.parametrize("name, source", SOURCES, ids=[n for n, _ in SOURCES])
def test_expression_contexts_equal_libcst(name: str, source: str) -> None:
    module = cst.parse_module(source)
    theirs = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(
        ExpressionContextProvider)
    assert expression_contexts(module) == dict(theirs)


class _OwnCode(cst.CSTVisitor):
    """What the rules' visitors gathered before :func:`own_code_nodes`: the nodes of some
    kinds, not in nested functions or classes, nor (optionally) in lambdas."""

    def __init__(self, function: cst.FunctionDef, kinds: tuple[type, ...],
                 in_lambdas: bool) -> None:
        super().__init__()
        self.function, self.kinds, self.in_lambdas = function, kinds, in_lambdas
        self.found: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, self.kinds):
            self.found.append(node)
        if isinstance(node, cst.FunctionDef):
            return node is self.function
        if isinstance(node, cst.Lambda):
            return self.in_lambdas
        return not isinstance(node, cst.ClassDef)


@pytest.mark.parametrize("name, source", SOURCES, ids=[n for n, _ in SOURCES])
def test_own_code_nodes_are_what_a_visitor_gathers(name: str, source: str) -> None:
    module = cst.parse_module(source)
    functions = [node for node, _ in walk(module) if isinstance(node, cst.FunctionDef)]
    for function in functions:
        for kinds, in_lambdas in (((cst.Return,), False), ((cst.Return, cst.Yield), False),
                                  ((cst.Call,), True)):
            visitor = _OwnCode(function, kinds, in_lambdas)
            function.visit(visitor)
            assert own_code_nodes(function, kinds, in_lambdas=in_lambdas) == visitor.found


@pytest.mark.parametrize("name, source", SOURCES, ids=[n for n, _ in SOURCES])
def test_children_read_by_type_hints_equal_children_tested_one_by_one(
        name: str, source: str) -> None:
    """The reader written for each node type's fields gives what testing every value of
    every field that may hold a node gives."""
    module = cst.parse_module(source)
    for node, _ in walk(module):
        read = children(node)  # learns the node type's fields first
        tested: list[cst.CSTNode] = []
        for field in _WALKED_FIELDS[type(node)]:
            _tested(getattr(node, field), tested)
        assert read == tested, type(node).__name__
