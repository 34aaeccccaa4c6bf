"""``--statistics --output-format json`` (counts per rule with ruff's field names), and
the findings whose fix applies, which ``--show-fixes`` lists under ``--check``."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..findings import Finding
from ..rules import rule_by_code
from . import is_applicable


def applicable_findings(findings: Sequence[Finding], unsafe_fixes: bool) -> list[Finding]:
    """The findings a fix run with these settings would fix."""
    return [f for f in findings if is_applicable(f, unsafe_fixes)]


def statistics_rows(findings: Sequence[Finding], unsafe_fixes: bool) -> list[dict[str, Any]]:
    """One row per rule, most frequent first, as ruff's JSON statistics:
    ``code``, ``name``, ``count``, ``fixable`` (a fix applies with the current settings)
    and ``fixable_count``."""
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if is_applicable(f, unsafe_fixes))
    rows = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = rule_by_code(code)
        rows.append({"code": code, "name": rule.name if rule else "", "count": count,
                     "fixable": fixable[code] > 0, "fixable_count": fixable[code]})
    return rows


def statistics_json(findings: Sequence[Finding], unsafe_fixes: bool) -> str:
    return json.dumps(statistics_rows(findings, unsafe_fixes), indent=2, ensure_ascii=False)
