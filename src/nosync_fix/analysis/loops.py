"""Loop facts: where a statement's loop is, what it assigns, what is read after it.

Hoisting a read out of a loop needs to know where the loop ends, which names
the loop changes, and which of them the code after the loop (or the next turn
of an enclosing loop) reads.
"""

from __future__ import annotations

import libcst as cst

from .base import LOOPS, Metadata, visit, walk


class LoopFacts:
    """Loop structure of one module."""

    def __init__(self, md: Metadata) -> None:
        self.md = md

    def enclosing_loop(self, node: cst.CSTNode) -> cst.For | cst.While | None:
        """The innermost loop whose body holds ``node``, within the same function."""
        previous: cst.CSTNode = node
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, LOOPS) and previous is ancestor.body:
                return ancestor
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return None
            previous = ancestor
        return None

    def periodic(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` runs only on some turns of its loop (or calls of its function):
        under an ``if`` inside them whose test takes a remainder (``if step % 100 == 0:``)."""
        loop = self.enclosing_loop(node)
        for ancestor in self.md.ancestors(node):
            if ancestor is loop or isinstance(ancestor, cst.FunctionDef):
                return False
            if isinstance(ancestor, cst.If) and any(
                    isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo)
                    for n, _ in walk(ancestor.test)):
                return True
        return False

    def every_step(self, node: cst.CSTNode) -> str:
        """"every step", or "whenever it runs (every N steps)" for :meth:`periodic` code."""
        return "whenever it runs (every N steps)" if self.periodic(node) else "every step"

    def enclosing_loops(self, node: cst.CSTNode) -> list[cst.For | cst.While]:
        """All loops around ``node`` in its function, innermost first."""
        loops = []
        loop = self.enclosing_loop(node)
        while loop is not None:
            loops.append(loop)
            loop = self.enclosing_loop(loop)
        return loops

    def assigned_names(self, loop: cst.For | cst.While) -> set[str]:
        """Names bound anywhere in the loop: its target and its body."""
        collector = _NameCollector(stores=True)
        if isinstance(loop, cst.For):
            collector.add_targets(loop.target)
        visit(loop.body, collector)
        return collector.names

    def names_read_in(self, node: cst.CSTNode) -> set[str]:
        collector = _NameCollector(stores=False, md=self.md)
        visit(node, collector)
        return collector.names

    def statements_after(self, statement: cst.BaseStatement) -> list[cst.BaseStatement]:
        """What may run after ``statement`` finishes, in its function.

        The statements after it in its block and in every enclosing block, and the
        whole body of every enclosing loop (its next turn). Stops at the function.
        """
        after: list[cst.BaseStatement] = []
        current: cst.CSTNode = statement
        while True:
            block = self.md.parent(current)
            if block is None:
                break
            if isinstance(block, (cst.IndentedBlock, cst.Module)):
                body = list(block.body)
                index = next((i for i, s in enumerate(body) if s is current), None)
                if index is not None:
                    after.extend(body[index + 1:])
                holder = self.md.parent(block) if isinstance(block, cst.IndentedBlock) else None
                if holder is None:
                    break
                if isinstance(holder, (cst.FunctionDef, cst.ClassDef)):
                    break
                if isinstance(holder, LOOPS) and block is holder.body:
                    after.extend(s for s in holder.body.body if s not in after)
                current = self._statement_holding(holder)
                if current is None:
                    break
            else:
                current = block
        return after

    def names_read_after(self, loop: cst.For | cst.While) -> set[str]:
        """Names read by code that may run after ``loop`` has finished."""
        names: set[str] = set()
        for statement in self.statements_after(loop):
            names |= self.names_read_in(statement)
        if isinstance(loop, (cst.For, cst.While)) and loop.orelse is not None:
            names |= self.names_read_in(loop.orelse)
        return names

    def first_statement_after(self, statement: cst.BaseStatement) -> cst.BaseStatement | None:
        block = self.md.parent(statement)
        if isinstance(block, (cst.IndentedBlock, cst.Module)):
            body = list(block.body)
            for i, s in enumerate(body):
                if s is statement and i + 1 < len(body):
                    return body[i + 1]
        return None

    def _statement_holding(self, node: cst.CSTNode) -> cst.CSTNode | None:
        current: cst.CSTNode | None = node
        while current is not None and not isinstance(current, cst.BaseStatement):
            current = self.md.parent(current)
        # `else:`/`finally:` blocks hang off their statement: climb to the statement itself.
        while current is not None and not isinstance(
            self.md.parent(current), (cst.IndentedBlock, cst.Module)
        ):
            current = self.md.parent(current)
        return current


class _NameCollector(cst.CSTVisitor):
    """Collects names that are stored (targets) or loaded."""

    def __init__(self, stores: bool, md: Metadata | None = None) -> None:
        self.stores = stores
        self.md = md
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        if self.stores:
            return
        if self.md is None or self.md.access(node) is not None:
            self.names.add(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if self.stores:
            self.add_targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.stores:
            self.add_targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self.stores:
            self.add_targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        if self.stores:
            self.add_targets(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if self.stores:
            self.add_targets(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        if self.stores:
            self.add_targets(node.name)

    def add_targets(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.add_targets(element.value)
        elif isinstance(target, cst.StarredElement):
            self.add_targets(target.value)
