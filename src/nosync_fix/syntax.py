"""Faster ways through Python's ``ast`` for the pre-filter, which walks every file.

``ast.iter_child_nodes`` and ``ast.walk`` are generators over generators
(``iter_fields``) with a look-up of the fields at every node; these read only the
fields that can hold nodes, with a function written once per node type. Same
children, in the same order, but for the *markers*: the ``ctx`` of a name
(``Load``, ``Store``, ``Del``) and the operator of an operation (``Add``, ``Not``,
``Eq``, ``And``), leaves that nobody walks to (they are read from the node that
holds them) and as many as a third of the nodes.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterator

#: The fields of the marker types (a type of its own in each: ``ctx``, ``op``, ``ops``).
_MARKER_FIELDS = frozenset({"ctx", "op", "ops"})
MARKERS = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
#: Field types of the ASDL grammar that hold no node (names, constants, flags).
_LEAF_TYPES = frozenset({"identifier", "string", "constant", "int"})
_MARKER_TYPES = frozenset(marker.__name__ for marker in MARKERS)
#: The ``*`` fields whose lists may hold None: ``{**x}``'s key, a keyword-only
#: parameter's missing default.
_NONE_IN_LISTS = frozenset({(ast.Dict, "keys"), (ast.arguments, "kw_defaults")})
_CHILDREN: dict[type, Callable[[ast.AST], list[ast.AST]]] = {}


def children(node: ast.AST) -> list[ast.AST]:
    """What ``ast.iter_child_nodes(node)`` yields but :data:`MARKERS`, as a list."""
    read = _CHILDREN.get(type(node))
    if read is None:
        read = _CHILDREN[type(node)] = _children_reader(type(node))
    return read(node)


def _children_reader(kind: type) -> Callable[[ast.AST], list[ast.AST]]:
    """A function that lists the children of a ``kind`` node, written for its fields.

    The pre-filter asks every node of every file for its children: a loop over the
    fields that tests each value costs twice a list display of the fields that can
    hold nodes (``[node.left, node.right]``), which the grammar, in each class's
    docstring (``BinOp(expr left, operator op, expr right)``), names with its type:
    ``expr*`` a list, ``expr?`` a node or None. A class whose docstring does not name
    its fields so is read the slow way."""
    match = re.fullmatch(r"\w+\((.*)\)", (kind.__doc__ or "").strip().split("\n")[0])
    declared = [part.split(" ") for part in match.group(1).split(", ")] if (
        match and match.group(1)) else []
    if not match or tuple(name for _, name in declared) != kind._fields:
        return functools.partial(_children_of_any, tuple(
            f for f in kind._fields if f not in _MARKER_FIELDS))
    parts, optional = [], False
    for field_type, name in declared:
        base = field_type.rstrip("*?")
        if base in _LEAF_TYPES or base in _MARKER_TYPES:
            continue
        many = field_type.endswith("*")
        parts.append(f"*node.{name}" if many else f"node.{name}")
        optional = optional or field_type.endswith("?") or (kind, name) in _NONE_IN_LISTS
    listed = f"[{', '.join(parts)}]"
    body = f"[child for child in {listed} if child is not None]" if optional else listed
    namespace: dict[str, Callable[[ast.AST], list[ast.AST]]] = {}
    exec(f"def children(node):\n    return {body}\n", namespace)  # noqa: S102 (our own text)
    return namespace["children"]


def _children_of_any(fields: tuple[str, ...], node: ast.AST) -> list[ast.AST]:
    found: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            for item in value:
                if isinstance(item, ast.AST):
                    found.append(item)
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node``, itself included, as ``ast.walk`` gives them but
    :data:`MARKERS`, in depth-first order (for callers that collect or test, not for
    those that care about the order)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


def statements(node: ast.AST) -> Iterator[ast.AST]:
    """Every statement under ``node`` (``except`` clauses and ``case`` blocks included),
    without going into expressions."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in children(current) if isinstance(child, _BLOCKS))
