"""The default output: one line per finding, like ruff, and a closing summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import click

from ..findings import FileError, Finding
from ..iteration import name_lines
from ..rules import rule_by_code
from ..runner import FileOutcome, Mode
from . import Summary, is_applicable


def finding_line(finding: Finding, unsafe_fixes: bool, color: bool) -> str:
    """``path:line:col: CODE [*] message`` (``path:cell N:line:col`` in a notebook, as ruff
    writes it); ``[*]`` marks a fix applicable right now."""
    where = f":{_cell(finding.cell)}{finding.line}:{finding.column}:"
    location = finding.filename + where
    code = finding.code
    mark = " [*]" if is_applicable(finding, unsafe_fixes) else ""
    if color:
        location = click.style(finding.filename, bold=True) + click.style(where, fg="cyan")
        code = click.style(code, fg="red", bold=True)
        mark = click.style(mark, fg="cyan") if mark else ""
    return f"{location} {code}{mark} {finding.message}"


def _cell(cell: int | None) -> str:
    return "" if cell is None else f"cell {cell}:"


def error_line(error: FileError, color: bool) -> str:
    label = click.style("error", fg="red", bold=True) if color else "error"
    return f"{label}: {error.filename}: {error.message}"


def warning_line(filename: str, message: str, color: bool) -> str:
    label = click.style("warning", fg="yellow", bold=True) if color else "warning"
    return f"{label}: {filename}: {message}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _nothing_found(summary: Summary) -> str:
    """No findings: all passed, unless a path or file failed (its error follows)."""
    if summary.errors:
        return f"No findings, but {_plural(summary.errors, 'error')}."
    return "All checks passed!"


def summary_lines(summary: Summary, mode: Mode, unsafe_fixes: bool) -> list[str]:
    if mode is Mode.FIX:
        if summary.total == 0:
            return [_nothing_found(summary)]
        parts = [f"{summary.fixed} fixed"]
        if summary.unsafe_only:
            parts.append(f"{summary.unsafe_only} fixable with --unsafe-fixes")
        other = summary.remaining - summary.unsafe_only - summary.fixable
        if other:
            parts.append(f"{other} without a fix")
        if summary.fixable:
            parts.append(f"{summary.fixable} left unfixed")
        return [f"Found {_plural(summary.total, 'finding')} ({', '.join(parts)})."]
    if mode is Mode.DIFF:
        lines = [f"Would fix {_plural(summary.fixed, 'finding')} in "
                 f"{_plural(summary.changed_files, 'file')}."]
        if summary.unsafe_only:
            lines.append(f"{summary.unsafe_only} more fixable with --unsafe-fixes.")
        return lines
    if summary.remaining == 0:
        return [_nothing_found(summary)]
    lines = [f"Found {_plural(summary.remaining, 'finding')}."]
    if summary.fixable:
        lines.append(f"[*] {summary.fixable} fixable with `nosync-fix`"
                     + (" --unsafe-fixes" if unsafe_fixes else "") + ".")
    if summary.unsafe_only:
        lines.append(f"{summary.unsafe_only} more fixable with --unsafe-fixes.")
    return lines


def statistics_lines(findings: Sequence[Finding], unsafe_fixes: bool) -> list[str]:
    """``count  CODE  [*] name`` per rule, most frequent first (like ruff --statistics)."""
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if is_applicable(f, unsafe_fixes))
    lines = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = rule_by_code(code)
        mark = "[*]" if fixable[code] else "[ ]"
        lines.append(f"{count:>5}\t{code}\t{mark} {rule.name if rule else ''}")
    return lines


def loop_lines(outcomes: Sequence[FileOutcome]) -> list[str]:
    """Per loop whose iteration a fix of the tier touches: its reads per iteration before
    and after the offered fixes (``--check``)."""
    lines: list[str] = []
    for outcome in outcomes:
        if outcome.result is None:
            continue
        for loop in outcome.result.loops:
            left = loop.remaining
            after = f"{len(left)} after the offered fixes"
            if left:
                after += f": {name_lines(left)}"
            lines.append(f"loop at {outcome.result.filename}:{_cell(loop.cell)}{loop.line}: "
                         f"{_plural(loop.reads, 'host read')} per iteration, {after}")
    return ["", "Per loop:", *lines] if lines else []


def fixed_lines(applied: Sequence[Finding], heading: str = "Fixed") -> list[str]:
    """What --show-fixes prints: per file, how many of each rule were fixed (``heading``
    "Would fix" for the fixes --diff shows and --check finds applicable)."""
    if not applied:
        return []
    by_file: dict[str, Counter[str]] = {}
    for finding in applied:
        by_file.setdefault(finding.filename, Counter())[finding.code] += 1
    lines = [f"{heading} {_plural(len(applied), 'finding')}:"]
    for filename, counts in sorted(by_file.items()):
        lines.append(f"- {filename}:")
        for code, count in sorted(counts.items()):
            rule = rule_by_code(code)
            lines.append(f"    {count} × {code} ({rule.name if rule else code})")
    return lines
