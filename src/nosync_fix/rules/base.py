"""The base every rule is built on: one class per rule, carrying its own documentation.

A rule is a LibCST visitor. It sees every node of a module once (all rules run
in one batched traversal), asks the shared :class:`~nosync_fix.analysis.ModuleAnalysis`
what it needs to know, and calls :meth:`Rule.report` with a message and,
when it can, a :class:`~nosync_fix.rewrite.Rewrite`. Rules never read files and
never print; the engine decides what is reported, fixed and written.

The class docstring is the rule's page (printed by ``--explain`` and written to
``docs/rules/``). It has these sections, in this order: ``## What it does``,
``## Why is this slow?``, ``## Example``, ``## Use instead``, ``## Fix safety``,
``## When not to apply``. The code blocks under *Example* and *Use instead*
are executed by the test suite and must agree.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from ..analysis import ModuleAnalysis
from ..analysis.base import walk
from ..findings import Applicability
from ..notebook import is_notebook
from ..prefilter import Signal
from ..rewrite import Rewrite

if TYPE_CHECKING:
    from ..config import Settings

#: The fix a rule can offer, as shown in the rules table.
FIX_KINDS = ("safe", "unsafe", "safe/unsafe", "none")
DOC_SECTIONS = (
    "What it does", "Why is this slow?", "Example", "Use instead", "Fix safety",
    "When not to apply",
)


@dataclass
class RuleContext:
    """What a rule may know about the file it checks."""

    analysis: ModuleAnalysis
    settings: Settings
    filename: str = "<string>"


@dataclass
class Report:
    """A finding as a rule reports it: a node of the tree, a message, maybe a rewrite."""

    rule: type[Rule]
    node: cst.CSTNode
    message: str
    rewrite: Rewrite | None = None
    extra: dict[str, object] = field(default_factory=dict)


class Rule(cst.BatchableCSTVisitor):
    """Base class of all rules. Subclasses set the class attributes and visit methods."""

    #: The rule code, e.g. "NSY201". Fixed forever once released.
    code: ClassVar[str] = ""
    #: kebab-case name, e.g. "accumulate-on-device".
    name: ClassVar[str] = ""
    #: One line for the rules table.
    summary: ClassVar[str] = ""
    #: "safe", "unsafe", "safe/unsafe" (depends on the case) or "none" (report only).
    fix_kind: ClassVar[str] = "none"
    #: "sync", "graph break" or "sync and graph break": what the pattern costs.
    cost: ClassVar[str] = "sync and graph break"
    #: Findings outside hot paths are dropped unless --all-paths is given.
    hot_paths_only: ClassVar[bool] = True
    #: Substrings at least one of which a file must contain for this rule to fire.
    #: A file matching no selected rule's triggers is not parsed at all.
    triggers: ClassVar[tuple[str, ...]] = ()
    #: The pre-filter's signals this rule acts on (``Signal.READ | Signal.CONDITION``):
    #: the rule is not run on a file that has none of them where it looks (see
    #: :mod:`nosync_fix.prefilter`). None: run it on every file its triggers match.
    #: Declaring too few signals hides findings; tests/test_prefilter.py checks them.
    signals: ClassVar[Signal | None] = None
    #: A fallback rule (NSY906) reports what no other rule reports: it collects its sites
    #: while the rules visit the tree, and the engine then calls its ``leftovers`` with
    #: the nodes the other rules reported. The engine runs every rule for it, selected or
    #: not, so that a read another rule handles is never reported twice.
    fallback: ClassVar[bool] = False

    #: Rules reach metadata through ``self.md`` and ``self.analysis``, which resolve it
    #: on first use; a rule that calls ``self.get_metadata`` declares its providers here.
    METADATA_DEPENDENCIES = ()

    def __init__(self, context: RuleContext) -> None:
        super().__init__()
        self.context = context
        self.analysis = context.analysis
        self.md = context.analysis.md
        self.reports: list[Report] = []

    def report(self, node: cst.CSTNode, message: str, rewrite: Rewrite | None = None) -> None:
        """Record a finding at ``node``; ``rewrite`` is the fix, if the rule has one.

        No rule fixes code that TorchScript compiles: the rewrites target eager mode and
        torch.compile, and TorchScript rejects some of them (``if __debug__:``).
        """
        if rewrite is not None and self.analysis.hot.scripted_function(node) is not None:
            message += (" (no automatic fix: the function is compiled by TorchScript, which "
                        "may not accept the rewrite)")
            rewrite = None
        reason = self._unsafe_in_this_file(node, rewrite) if rewrite is not None and (
            rewrite.applicability is Applicability.SAFE) else None
        if rewrite is not None and reason is not None:
            message += reason
            rewrite = replace(rewrite.unsafe(), message=rewrite.message + reason)
        self.reports.append(Report(type(self), node, message, rewrite))

    def _unsafe_in_this_file(self, node: cst.CSTNode, rewrite: Rewrite) -> str | None:
        """Why a fix the rule found safe is unsafe in this file (for the messages), or None:
        a `.double()` where the file mentions Apple MPS; a conversion after a loop of a
        notebook's cell, which an interrupt skips while the kernel keeps the variables."""
        if _adds_float64(rewrite) and self.analysis.mentions_mps:
            return (" (unsafe: this file mentions Apple MPS, which has no float64: the "
                    "fix's `.double()` raises there)")
        if rewrite.after and is_notebook(self.context.filename) and (
                not self._converts_locals_only(node, rewrite)):
            return (" (unsafe in a notebook: a loop stopped by an interrupt leaves the "
                    "kernel's variables as they are, and the conversion this fix adds "
                    "after the loop does not run, so tensors stay where numbers were)")
        return None

    def _converts_locals_only(self, node: cst.CSTNode, rewrite: Rewrite) -> bool:
        """Whether every statement ``rewrite`` adds after a loop binds a local name of the
        function around ``node``: an interrupt there throws the function's locals away."""
        function = self.md.enclosing_function(node)
        if function is None:
            return False
        declared = {name.name.value for found, _ in walk(function)
                    if isinstance(found, (cst.Global, cst.Nonlocal)) for name in found.names}
        for _, statements in rewrite.after:
            for statement in statements:
                if not isinstance(statement, cst.SimpleStatementLine):
                    return False
                for small in statement.body:
                    if not isinstance(small, cst.Assign) or not all(
                            isinstance(t.target, cst.Name) and t.target.value not in declared
                            for t in small.targets):
                        return False
        return True

    def leftovers(self, covered: Callable[[cst.CSTNode], bool]) -> None:
        """For a ``fallback`` rule: report the sites for which ``covered`` is false."""

    # -- documentation -----------------------------------------------------------------------

    @classmethod
    def documentation(cls) -> str:
        """The rule's page in Markdown (its docstring)."""
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def page(cls) -> str:
        """The full page: title, summary line, fix kind and the documentation."""
        fix = {"none": "no fix (report only)", "safe": "safe fix", "unsafe": "unsafe fix",
               "safe/unsafe": "safe or unsafe fix, depending on the case"}[cls.fix_kind]
        return (f"# {cls.code} {cls.name}\n\n{cls.summary}\n\n"
                f"Cost: {cls.cost}. Fix: {fix}.\n\n{cls.documentation()}\n")

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        """The sections of the documentation, keyed by heading."""
        sections: dict[str, str] = {}
        current = None
        for line in cls.documentation().splitlines():
            match = re.match(r"^## (.+?)\s*$", line)
            if match:
                current = match.group(1)
                sections[current] = ""
            elif current is not None:
                sections[current] += line + "\n"
        return {k: v.strip("\n") for k, v in sections.items()}

    @classmethod
    def doc_example(cls, section: str) -> str | None:
        """The first ```python block of a section, or None."""
        text = cls.doc_sections().get(section, "")
        match = re.search(r"```python\n(.*?)```", text, re.S)
        return match.group(1) if match else None


def _adds_float64(rewrite: Rewrite) -> bool:
    """Whether ``rewrite`` casts to float64 (``.double()``) more often than the code it
    replaces did: a cast the original already made fails (or not) as the original did."""
    def casts(node: cst.CSTNode) -> int:
        return sum(1 for found, _ in walk(node) if isinstance(found, cst.Call)
                   and isinstance(found.func, cst.Attribute) and found.func.attr.value == "double")

    added = sum(casts(node) for _, new in rewrite.replacements
                for node in (new.nodes if isinstance(new, cst.FlattenSentinel) else [new])
                if isinstance(node, cst.CSTNode))
    added += sum(casts(statement) for _, statements in rewrite.before + rewrite.after
                 for statement in statements)
    return added > sum(casts(old) for old, _ in rewrite.replacements)
