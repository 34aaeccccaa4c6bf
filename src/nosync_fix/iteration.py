"""Per-iteration judgement (issue 20, item 3): a fix inside a loop gains nothing while the
same iteration still reads the device elsewhere.  This post-pass over a file's findings
appends to each fixable finding in a loop the other lines of its innermost loop that still
sync after the fixes the user's tier applies, e.g. ``"; the iteration still syncs at line
42 (NSY906)"``.  Only the loop's own body counts: a read in a function the loop calls is
out of scope.  Rules know nothing of this; the engine calls it on the findings it reports.
"""

from __future__ import annotations

import ast
import bisect
import functools
from collections import deque
from collections.abc import Sequence
from dataclasses import replace

from . import syntax
from .findings import Applicability, Finding, LoopSummary

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


def loop_spans(tree: ast.AST) -> list[tuple[int, int]]:
    """The (first, last) lines of every loop, outermost first."""
    return list(_loops(tree)[0])


@functools.lru_cache(maxsize=1)
def _loops(tree: ast.AST) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """:func:`loop_spans`, and the spans of the functions and classes defined inside a loop
    (their bodies are not the iteration), from one walk in the order of ``ast.walk``.
    Kept for the last tree asked (by identity): :func:`annotate` and
    :func:`loop_summaries` ask it of the same tree, one after the other.

    Each loop's own walk for the definitions in it, as it was, walked a loop nested n deep
    n + 1 times (a sixth of a diffusers check went there). Outside loops only statements
    are walked: a loop is a statement, and no expression holds one (a lambda outside a
    loop cuts nothing)."""
    spans: list[tuple[int, int]] = []
    cuts: list[tuple[int, int]] = []
    queue: deque[tuple[ast.AST, bool]] = deque([(tree, False)])
    pop, extend = queue.popleft, queue.extend
    while queue:
        node, in_loop = pop()
        if isinstance(node, _LOOPS):
            spans.append((node.lineno, node.end_lineno or node.lineno))  # type: ignore[attr-defined]
            in_loop = True
        elif in_loop and isinstance(node, _SCOPES):
            cuts.append((node.lineno, node.end_lineno or node.lineno))  # type: ignore[attr-defined]
        if in_loop:
            extend((child, True) for child in syntax.children(node))
        else:
            extend((child, False) for child in syntax.children(node)
                   if isinstance(child, _BLOCKS))
    return tuple(spans), tuple(cuts)


def _innermost(line: int, spans: Sequence[tuple[int, int]]) -> tuple[int, int] | None:
    inside = [span for span in spans if span[0] <= line <= span[1]]
    return min(inside, key=lambda span: span[1] - span[0], default=None)


def _loop_of_each(findings: Sequence[Finding], spans: Sequence[tuple[int, int]],
                  cuts: Sequence[tuple[int, int]]) -> list[tuple[int, int] | None]:
    """The innermost loop whose iteration holds each finding, or None: a loop is not the
    iteration of a finding inside a function or class defined in that loop (``cuts``).

    Loops are statements, so their spans nest or are apart: the innermost span around a
    line is found from the last span that starts before it, up through the spans around
    that one, and only the cuts inside it are looked at. (Asking every span and every
    cut of each finding was quadratic in a file of thousands of loops.) Should the spans
    ever not nest, every span is asked, as the definition says."""
    order = sorted(set(spans))
    around = _enclosing(order)
    if around is None:
        return [_innermost(f.line, [s for s in spans if s[0] <= f.line <= s[1] and not any(
            s[0] <= a and b <= s[1] and a <= f.line <= b for a, b in cuts)]) for f in findings]
    starts = [span[0] for span in order]
    cut_order = sorted(cuts)
    cut_starts = [cut[0] for cut in cut_order]
    loop_of: list[tuple[int, int] | None] = []
    for f in findings:
        line = f.line
        index = bisect.bisect_right(starts, line) - 1
        span = order[index] if index >= 0 else None
        while span is not None and span[1] < line:
            span = around[span]
        if span is not None and any(
                span[0] <= a and b <= span[1] and b >= line
                for a, b in cut_order[bisect.bisect_left(cut_starts, span[0]):
                                      bisect.bisect_right(cut_starts, line)]):
            span = None  # in a function or class defined in the loop, and so in the outer
        loop_of.append(span)
    return loop_of


def _enclosing(order: Sequence[tuple[int, int]],
               ) -> dict[tuple[int, int], tuple[int, int] | None] | None:
    """The span directly around each of ``order`` (spans sorted by their first line), or
    None if two of them overlap without one holding the other."""
    around: dict[tuple[int, int], tuple[int, int] | None] = {}
    stack: list[tuple[int, int]] = []
    for span in order:
        while stack and stack[-1][1] < span[0]:
            stack.pop()
        if stack and stack[-1][1] < span[1]:
            return None
        around[span] = stack[-1] if stack else None
        stack.append(span)
    return around


def _offered(finding: Finding, allowed: set[Applicability]) -> bool:
    """Whether the user's tier applies the finding's fix."""
    return finding.fix is not None and finding.fix.applicability in allowed


def _fixed_sites(findings: Sequence[Finding], allowed: set[Applicability]) -> set[tuple]:
    """The (line, column) of every finding whose fix the tier applies: another rule's
    report of the same site (NSY101 on the `if` NSY201 rewrites) is gone after the fix."""
    return {(f.line, f.column) for f in findings if _offered(f, allowed)}


def annotate(findings: Sequence[Finding], tree: ast.AST,
             allowed: set[Applicability]) -> list[Finding]:
    """``findings`` with the remaining syncs of their iteration named on each fixable one."""
    spans, cuts = _loops(tree)
    if not spans or len(findings) < 2:
        return list(findings)
    loop_of = _loop_of_each(findings, spans, cuts)
    fixed = _fixed_sites(findings, allowed)
    members: dict[tuple[int, int], list[Finding]] = {}
    for g, loop in zip(findings, loop_of, strict=True):
        if loop is not None:
            members.setdefault(loop, []).append(g)
    out: list[Finding] = []
    for f, loop in zip(findings, loop_of, strict=True):
        if loop is None or not _offered(f, allowed):
            out.append(f)
            continue
        remaining = sorted({(g.line, g.code) for g in members[loop]
                            if g is not f and not _offered(g, allowed)
                            and (g.line, g.column) not in fixed})
        if remaining:
            f = replace(f, message=f"{f.message}; the iteration still syncs at "
                                   f"{name_lines(remaining)}")
        out.append(f)
    return out


def name_lines(lines: Sequence[tuple[int, str]], shown: int = 3) -> str:
    """``line 9 (NSY906), line 12 (NSY202) and 2 more``: the first ``shown`` of
    (line, code) pairs, for a finding's message and the ``--check`` summary alike."""
    named = ", ".join(f"line {line} ({code})" for line, code in lines[:shown])
    return named + (f" and {len(lines) - shown} more" if len(lines) > shown else "")


def loop_summaries(findings: Sequence[Finding], tree: ast.AST,
                   allowed: set[Applicability]) -> tuple[LoopSummary, ...]:
    """Per innermost loop that offers a fix at the tier: its line, the findings in its
    iteration, and those the fixes leave; loops in line order."""
    spans, cuts = _loops(tree)
    if not spans:
        return ()
    groups: dict[tuple[int, int], list[Finding]] = {}
    for f, loop in zip(findings, _loop_of_each(findings, spans, cuts), strict=True):
        if loop is not None:
            groups.setdefault(loop, []).append(f)
    fixed = _fixed_sites(findings, allowed)
    out = []
    for loop, members in sorted(groups.items()):
        left = [f for f in members if not _offered(f, allowed)
                and (f.line, f.column) not in fixed]
        if len(left) < len(members):
            # Reads are counted by site: two rules reporting one `if` are one read.
            reads = len({(f.line, f.column) for f in members})
            out.append(LoopSummary(loop[0], reads,
                                   tuple(sorted((f.line, f.code) for f in left))))
    return tuple(out)
