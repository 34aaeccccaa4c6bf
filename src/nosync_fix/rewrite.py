"""Rewrites: how a rule describes its fix as changes to the syntax tree.

A rule never edits text. It hands the engine a :class:`Rewrite` naming nodes of
the tree it was given and what to put in their place, plus statements to
insert around statements and the imports the new code needs. The engine
checks rewrites against each other, applies those that do not overlap, adds
the imports with LibCST's ``AddImportsVisitor`` and validates the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import libcst as cst

from .findings import Applicability

Replacement = cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel


@dataclass(frozen=True)
class ImportSpec:
    """``import module`` (obj None) or ``from module import obj [as asname]``."""

    module: str
    obj: str | None = None
    asname: str | None = None


@dataclass(frozen=True)
class Rewrite:
    """A fix expressed as changes to the tree a rule was given.

    Build it step by step; each method returns a new rewrite::

        Rewrite("Keep the sum on the device", Applicability.SAFE)
            .replace(read, new_expression)
            .insert_after(loop, [conversion])
            .needs_import("torch")
    """

    message: str
    applicability: Applicability = Applicability.SAFE
    replacements: tuple[tuple[cst.CSTNode, Replacement], ...] = ()
    before: tuple[tuple[cst.CSTNode, tuple[cst.BaseStatement, ...]], ...] = ()
    after: tuple[tuple[cst.CSTNode, tuple[cst.BaseStatement, ...]], ...] = ()
    imports: tuple[ImportSpec, ...] = ()
    #: Imports that may become unused; removed by RemoveImportsVisitor if they are.
    maybe_unused: tuple[ImportSpec, ...] = field(default=())

    def replace(self, node: cst.CSTNode, new: Replacement) -> Rewrite:
        return replace(self, replacements=self.replacements + ((node, new),))

    def insert_before(self, statement: cst.CSTNode,
                      statements: Sequence[cst.BaseStatement]) -> Rewrite:
        return replace(self, before=self.before + ((statement, tuple(statements)),))

    def insert_after(self, statement: cst.CSTNode,
                     statements: Sequence[cst.BaseStatement]) -> Rewrite:
        return replace(self, after=self.after + ((statement, tuple(statements)),))

    def needs_import(self, module: str, obj: str | None = None,
                     asname: str | None = None) -> Rewrite:
        return replace(self, imports=self.imports + (ImportSpec(module, obj, asname),))

    def may_leave_unused(self, module: str, obj: str | None = None) -> Rewrite:
        return replace(self, maybe_unused=self.maybe_unused + (ImportSpec(module, obj),))

    def unsafe(self) -> Rewrite:
        return replace(self, applicability=Applicability.UNSAFE)

    @property
    def targets(self) -> list[tuple[str, cst.CSTNode]]:
        """Every node this rewrite touches, with how: "replace" or "insert"."""
        out = [("replace", node) for node, _ in self.replacements]
        out += [("insert", node) for node, _ in self.before + self.after]
        return out
