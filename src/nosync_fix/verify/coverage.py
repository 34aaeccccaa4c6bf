"""Branch coverage of the rewritten conditions: did the trials drive them both ways?

A rewrite such as ``if c: x = a`` → ``x = torch.where(c, a, x)`` is only proven
on the inputs that took both branches. The verifier finds, in the original
file, the conditions that the diff touches (the test itself, or code inside the
branch it guards), and runs an instrumented copy of the original in which each
such test ``T`` becomes ``__nosync_verify_branch__(id, T)``. The probe evaluates
``bool(T)`` once and returns that bool, which is exactly what ``if``, ``while``,
``assert`` and conditional expressions do with their test, so the instrumented
program behaves like the original (same reads, same results) while the probe
counts the outcomes.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

PROBE = "__nosync_verify_branch__"
#: Records the value compared with a module-level threshold (see :func:`instrument`).
VALUE = "__nosync_verify_value__"


@dataclass
class Condition:
    """A condition of the original file whose outcomes are counted."""

    index: int
    line: int
    text: str
    #: "rewritten" (the diff touches the test) or "guards rewritten code".
    why: str
    kind: str  # "if", "while", "assert", "conditional expression", "comprehension if"
    true: int = 0
    false: int = 0
    #: The module global the test compares with (``x.item() < MAX_NORM``), if any: the
    #: verifier sets it to the compared value to try the tie.
    threshold: str | None = None

    @property
    def both_ways(self) -> bool:
        return self.true > 0 and self.false > 0

    def warning(self, trials: int, adversarial: int = 0) -> str | None:
        if self.both_ways:
            return None
        where = f"line {self.line}: `{self.text}`"
        runs = f"{trials} trials" + (f" and {adversarial} adversarial inputs" if adversarial
                                     else "")
        if self.true == 0 and self.false == 0:
            return f"{where} ({self.why}) was never reached in {runs}"
        side = "true" if self.false == 0 else "false"
        never = "false" if side == "true" else "true"
        return (f"{where} ({self.why}) was {side} every time in {runs}; "
                f"the {never} branch of the rewrite is untested")


@dataclass
class BranchProbe:
    """Counts outcomes; installed in the instrumented module under :data:`PROBE`."""

    conditions: list[Condition] = field(default_factory=list)
    #: Condition index -> the first value compared with its threshold (a tensor is cloned).
    values: dict[int, object] = field(default_factory=dict)

    def value(self, index: int, value: object) -> object:
        if index not in self.values:
            self.values[index] = _keep(value)
        return value

    def __call__(self, index: int, value: object) -> bool:
        outcome = bool(value)
        condition = self.conditions[index]
        if outcome:
            condition.true += 1
        else:
            condition.false += 1
        return outcome


@dataclass(frozen=True)
class Changes:
    """The lines of the original that a diff touches."""

    #: Lines of the original that were replaced or deleted.
    lines: frozenset[int]
    #: Insertions: (line of the original just before the inserted text, its indentation).
    insertions: tuple[tuple[int, int], ...]


def changes(before: str, after: str) -> Changes:
    old, new = before.splitlines(), after.splitlines()
    lines: set[int] = set()
    insertions: list[tuple[int, int]] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            lines.update(range(i1 + 1, i2 + 1))
        if tag in ("replace", "insert"):
            inserted = [ln for ln in new[j1:j2] if ln.strip()]
            if inserted:
                indent = len(inserted[0]) - len(inserted[0].lstrip())
                insertions.append((i1 if tag == "insert" else i2, indent))
    return Changes(frozenset(lines), tuple(insertions))


def _tests(tree: ast.AST) -> Iterable[tuple[ast.AST, ast.expr, str]]:
    """(owner, test expression, kind) for every condition in the tree."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            yield node, node.test, "if"
        elif isinstance(node, ast.While):
            yield node, node.test, "while"
        elif isinstance(node, ast.Assert):
            yield node, node.test, "assert"
        elif isinstance(node, ast.IfExp):
            yield node, node.test, "conditional expression"
        elif isinstance(node, ast.comprehension):
            for test in node.ifs:
                yield node, test, "comprehension if"


def _span(node: ast.AST) -> range:
    return range(node.lineno, (node.end_lineno or node.lineno) + 1)  # type: ignore[attr-defined]


def _guards(statement: ast.If | ast.While, line: int, indent: int | None) -> bool:
    """Whether ``line`` (``indent`` None) or text inserted after ``line`` at ``indent``
    lies inside one of the statement's branches."""
    header_end = statement.test.end_lineno or statement.test.lineno
    body_end = statement.body[-1].end_lineno or statement.body[-1].lineno
    blocks = [(statement.body, header_end)]
    if statement.orelse:
        blocks.append((statement.orelse, body_end + 1))
    for block, after_header in blocks:
        first, last = block[0], block[-1]
        end = last.end_lineno or last.lineno
        if indent is None:
            if first.lineno <= line <= end:
                return True
        elif after_header <= line <= end and indent >= first.col_offset:
            return True
    return False


def watched_conditions(source: str, tree: ast.Module, diff: Changes) -> list[tuple[ast.expr,
                                                                                     Condition]]:
    """The conditions to count: tests the diff touches and the branches that guard changes."""
    chosen: dict[int, tuple[ast.expr, Condition]] = {}

    def choose(test: ast.expr, kind: str, why: str) -> None:
        if id(test) in chosen:
            return
        segment = ast.get_source_segment(source, test) or ast.unparse(test)
        text = " ".join(segment.split())
        chosen[id(test)] = (test, Condition(len(chosen), test.lineno, _short(text), why, kind))

    statements = [(owner, test, kind) for owner, test, kind in _tests(tree)]
    for _owner, test, kind in statements:
        if diff.lines.intersection(_span(test)):
            choose(test, kind, "rewritten")
    branches = [(owner, test, kind) for owner, test, kind in statements
                if isinstance(owner, (ast.If, ast.While))]
    touched: list[tuple[int, int | None]] = [(line, None) for line in sorted(diff.lines)]
    touched += [(line, indent) for line, indent in diff.insertions]
    for line, indent in touched:
        enclosing = [(owner, test, kind) for owner, test, kind in branches
                     if _guards(owner, line, indent)]  # type: ignore[arg-type]
        if enclosing:
            owner, test, kind = max(enclosing, key=lambda item: (item[0].lineno,
                                                                 item[0].col_offset))
            choose(test, kind, "guards rewritten code")
    return sorted(chosen.values(), key=lambda item: item[1].index)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _keep(value: object) -> object:
    detach = getattr(value, "detach", None)
    if callable(detach):
        try:
            return detach().clone()  # type: ignore[union-attr]
        except Exception:
            return None
    return value


def threshold_of(test: ast.expr) -> tuple[ast.Compare, str, int] | None:
    """``(comparison, NAME, side)`` when ``test`` (or ``not test``) compares one value with
    a bare name (``x.item() < MAX_NORM``): side 0 is the left operand, 1 the right."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(
            test.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(right, ast.Name) and not isinstance(left, (ast.Name, ast.Constant)):
        return test, right.id, 0
    if isinstance(left, ast.Name) and not isinstance(right, (ast.Name, ast.Constant)):
        return test, left.id, 1
    return None


class _Instrument(ast.NodeTransformer):
    def __init__(self, wanted: dict[int, int]) -> None:
        self.wanted = wanted  # id(test node) -> condition index

    def _wrap(self, test: ast.expr) -> ast.expr:
        index = self.wanted.get(id(test))
        if index is None:
            return test
        found = threshold_of(test)
        if found is not None:  # record the value compared with the threshold
            compare, _name, side = found
            operand = compare.left if side == 0 else compare.comparators[0]
            recorded = ast.copy_location(ast.Call(
                func=ast.Name(VALUE, ast.Load()), args=[ast.Constant(index), operand],
                keywords=[]), operand)
            if side == 0:
                compare.left = recorded
            else:
                compare.comparators = [recorded]
        call = ast.Call(func=ast.Name(PROBE, ast.Load()),
                        args=[ast.Constant(index), test], keywords=[])
        return ast.copy_location(call, test)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        # Wrap before descending, while the ids of the original test nodes are still valid.
        if isinstance(node, (ast.If, ast.While, ast.Assert, ast.IfExp)):
            node.test = self._wrap(node.test)
        elif isinstance(node, ast.comprehension):
            node.ifs = [self._wrap(test) for test in node.ifs]
        return super().generic_visit(node)


def instrument(source: str, diff: Changes, filename: str) -> tuple[ast.Module, BranchProbe]:
    """The original, parsed, with the watched conditions wrapped in the probe."""
    tree = ast.parse(source, filename=filename)
    watched = watched_conditions(source, tree, diff)
    for test, condition in watched:
        found = threshold_of(test)
        condition.threshold = found[1] if found else None
    probe = BranchProbe([condition for _, condition in watched])
    transformer = _Instrument({id(test): condition.index for test, condition in watched})
    tree = ast.fix_missing_locations(transformer.visit(tree))
    return tree, probe
