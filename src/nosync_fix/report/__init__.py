"""Output formats: text (default), json (ruff's field names), github annotations, SARIF,
reviewdog's rdjson."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..findings import Applicability, FileError, Finding
from ..runner import FileOutcome, Mode

FORMATS = ("text", "json", "github", "sarif", "rdjson")


@dataclass(frozen=True)
class Summary:
    """Counts behind the closing line of a run."""

    fixed: int
    remaining: int
    #: Remaining findings whose fix is applicable with the current settings.
    fixable: int
    #: Remaining findings whose fix needs --unsafe-fixes.
    unsafe_only: int
    changed_files: int
    errors: int

    @property
    def total(self) -> int:
        return self.fixed + self.remaining


def remaining_findings(outcomes: Sequence[FileOutcome]) -> list[Finding]:
    """The findings left in the files, including those of a file that was analysed but not
    changed and then failed (a link out of the checked paths, a notebook whose fixes could
    not be written back): its findings are real."""
    found = [f for o in outcomes if o.result is not None and (
        o.error is None or not o.result.changed) for f in o.result.findings]
    return sorted(found, key=Finding.sort_key)


def applied_findings(outcomes: Sequence[FileOutcome]) -> list[Finding]:
    return [f for o in outcomes if o.result is not None and o.error is None
            for f in o.result.applied]


def errors(outcomes: Sequence[FileOutcome]) -> list[FileError]:
    return [o.error for o in outcomes if o.error is not None]


def is_applicable(finding: Finding, unsafe_fixes: bool) -> bool:
    fix = finding.fix
    return fix is not None and (fix.applicability is Applicability.SAFE or unsafe_fixes)


def summarize(outcomes: Sequence[FileOutcome], mode: Mode, unsafe_fixes: bool) -> Summary:
    remaining = remaining_findings(outcomes)
    fixed = len(applied_findings(outcomes)) if mode is not Mode.CHECK else 0
    return Summary(
        fixed=fixed,
        remaining=len(remaining),
        fixable=sum(is_applicable(f, unsafe_fixes) for f in remaining),
        unsafe_only=sum(f.fix is not None and not is_applicable(f, unsafe_fixes)
                        for f in remaining),
        changed_files=sum(o.changed for o in outcomes if o.error is None),
        errors=len(errors(outcomes)),
    )
