"""Suppression comments: ``# noqa`` or ``# nosync: ignore[...]`` on a line,
``# nosync-fix: noqa`` for a file.

``# noqa`` alone suppresses every finding on its line; ``# noqa: NSY201,NSY3``
suppresses those codes and prefixes. ``# nosync: ignore[NSY201, NSY3]`` (or
``# nosync-fix: ignore[...]``) does the same in the style of ``# type: ignore[...]``,
which ruff leaves alone: its RUF100/RUF102 fixes delete a ``# noqa: NSY201`` unless
``lint.external = ["NSY"]``. ``# nosync: ignore`` without brackets is the whole
line; a bracket without codes suppresses nothing. ``# nosync-fix: noqa`` (optionally
with codes) on a line of its own suppresses them in the whole file. Comments are
found with the tokenizer, so a ``# noqa`` inside a string does not count.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:\s*,\s*[A-Z]+[0-9]*)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(
    r"#\s*nosync-fix\s*:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:\s*,\s*[A-Z]+[0-9]*)*))?",
    re.IGNORECASE,
)
_IGNORE = re.compile(
    r"#\s*nosync(?:-fix)?\s*:\s*ignore\b(?!-)"
    r"(?:\s*\[\s*(?P<codes>[A-Z]+[0-9]*(?:\s*,\s*[A-Z]+[0-9]*)*)\s*\]|(?!\s*\[))",
    re.IGNORECASE,
)

#: "every code".
ALL = frozenset({"*"})


def _codes(text: str | None) -> frozenset[str]:
    if not text:
        return ALL
    return frozenset(c.strip().upper() for c in text.split(",") if c.strip())


def _matches(codes: frozenset[str], code: str) -> bool:
    return codes is ALL or any(code.startswith(c) for c in codes)


@dataclass
class Suppressions:
    """The noqa comments of one file."""

    file_codes: frozenset[str] | None = None
    lines: dict[int, frozenset[str]] = field(default_factory=dict)

    def suppresses(self, code: str, line: int) -> bool:
        if self.file_codes is not None and _matches(self.file_codes, code):
            return True
        codes = self.lines.get(line)
        return codes is not None and _matches(codes, code)

    def suppresses_all_of_file(self) -> bool:
        return self.file_codes is ALL


def parse_suppressions(text: str) -> Suppressions:
    """Find the noqa comments of a source text."""
    result = Suppressions()
    lowered = text.lower()
    if "noqa" not in lowered and not ("nosync" in lowered and "ignore" in lowered):
        return result
    try:
        comments = [
            (tok.start[0], tok.string, tok.line)
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        comments = [(i, line[line.index("#"):], line)
                    for i, line in enumerate(text.splitlines(), 1) if "#" in line]
    for line_no, comment, line in comments:
        file_match = _FILE_NOQA.search(comment)
        if file_match:
            if line.strip().startswith("#"):
                codes = _codes(file_match.group("codes"))
                result.file_codes = codes if result.file_codes is None else (
                    ALL if ALL in (codes, result.file_codes) else result.file_codes | codes)
            continue
        for pattern in (_NOQA, _IGNORE):
            match = pattern.search(comment)
            if match:
                codes = _codes(match.group("codes"))
                known = result.lines.get(line_no)
                result.lines[line_no] = codes if known is None else (
                    ALL if ALL in (codes, known) else known | codes)
    return result
