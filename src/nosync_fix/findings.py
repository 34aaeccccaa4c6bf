"""Public result types: what a check or a fix hands back to its caller.

These are plain, frozen data classes so that other tools can keep, compare and
serialise them. Positions follow ruff's conventions: lines and columns are
1-based, the end is exclusive, and columns count characters.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Applicability(str, enum.Enum):
    """How far a fix can be trusted.

    ``SAFE``: the observable behaviour is the same on every input the original
    accepted. ``UNSAFE``: the same on the inputs users normally have, but it
    differs at an edge that the rule's page names; applied only with
    ``--unsafe-fixes``.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """A textual replacement of ``[start, end)`` by ``content``."""

    content: str
    line: int
    column: int
    end_line: int
    end_column: int
    #: In a notebook, the cell the positions count in (cells numbered from 1).
    cell: int | None = None


@dataclass(frozen=True)
class Fix:
    """A rewrite offered for a finding."""

    applicability: Applicability
    message: str
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Finding:
    """One host read of a device value (or a related pattern) found in a file."""

    code: str
    message: str
    filename: str
    line: int
    column: int
    end_line: int
    end_column: int
    fix: Fix | None = None
    #: The line on which a suppression comment (``noqa``) silences this finding.
    noqa_line: int = 0
    #: In a notebook, the cell the positions count in (cells numbered from 1, as
    #: Jupyter and ruff number them); None in a Python file.
    cell: int | None = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.filename, self.cell or 0, self.line, self.column, self.code)


@dataclass(frozen=True)
class LoopSummary:
    """One loop of a checked file: the host reads in its iteration, and the (line, code)
    of those the offered fixes of the user's tier leave (:mod:`nosync_fix.iteration`)."""

    line: int
    reads: int
    remaining: tuple[tuple[int, str], ...] = ()
    #: In a notebook, the loop's cell (its lines count in it).
    cell: int | None = None


@dataclass(frozen=True)
class FileError:
    """A file that could not be processed: a one-line reason, nothing written."""

    filename: str
    message: str
    #: "parse", "io", "internal" or "config": what kind of failure it was.
    kind: str = "io"


@dataclass(frozen=True)
class FixResult:
    """The outcome of fixing one source text.

    ``findings`` are the findings that remain in ``fixed``; ``applied`` are the
    findings whose fixes were applied (positions refer to the source they were
    found in). ``error`` is set when the file could not be parsed or a rewrite
    failed validation; then ``fixed == original``.
    """

    filename: str
    original: str
    fixed: str
    findings: tuple[Finding, ...] = ()
    applied: tuple[Finding, ...] = ()
    diff: str = ""
    error: FileError | None = None
    encoding: str = "utf-8"
    #: The raw bytes of the result, with the original encoding, BOM and newlines.
    fixed_bytes: bytes = field(default=b"", repr=False)
    #: Per loop whose iteration a fix touches, reads before and after the fixes (checks only).
    loops: tuple[LoopSummary, ...] = ()

    @property
    def changed(self) -> bool:
        return self.fixed != self.original
