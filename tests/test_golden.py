"""Every golden case: the findings, the fix, idempotence, and that the output compiles."""

from __future__ import annotations

import os

import pytest

from golden import cases, format_findings, format_messages
from nosync_fix.engine import process_source
from nosync_fix.rules import all_rules

UPDATE = os.environ.get("NOSYNC_UPDATE_GOLDEN") == "1"
CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=str)
def test_golden(case) -> None:
    source = case.input.read_text(encoding="utf-8")
    settings = case.settings()
    checked = process_source(source, str(case.input.name), settings, fix=False)
    assert checked.error is None, checked.error
    fixed = process_source(source, str(case.input.name), settings, fix=True)
    assert fixed.error is None, fixed.error
    found = format_findings(checked.findings)
    if UPDATE:
        case.findings.write_text(found, encoding="utf-8")
        if fixed.fixed != source:
            case.output.write_text(fixed.fixed, encoding="utf-8")
        elif case.output.exists():
            case.output.unlink()
    assert case.findings.exists(), f"{case}: missing {case.findings.name}"
    assert found == case.findings.read_text(encoding="utf-8"), "findings differ"
    if case.messages.exists():  # optional: written by the update only where it exists
        messages = format_messages(checked.findings)
        if UPDATE:
            case.messages.write_text(messages, encoding="utf-8")
        assert messages == case.messages.read_text(encoding="utf-8"), "messages differ"
    expected = case.output.read_text(encoding="utf-8") if case.output.exists() else source
    assert fixed.fixed == expected, "fixed source differs"
    compile(fixed.fixed, str(case.output), "exec")
    again = process_source(fixed.fixed, str(case.output.name), settings, fix=True)
    assert again.fixed == fixed.fixed, "a second fix pass changed the output"


def test_every_rule_has_golden_cases() -> None:
    codes = {case.code for case in CASES}
    missing = [rule.code for rule in all_rules() if rule.code not in codes]
    assert not missing, f"rules without golden cases: {missing}"


def test_golden_folders_name_real_rules() -> None:
    known = {rule.code for rule in all_rules()}
    assert {case.code for case in CASES} <= known


@pytest.mark.parametrize("code", sorted({c.code for c in CASES}))
def test_each_rule_has_positive_and_negative_cases(code: str) -> None:
    rule_cases = [c for c in CASES if c.code == code]
    positive = [c for c in rule_cases if c.findings.exists() and c.findings.read_text().strip()]
    negative = [c for c in rule_cases if c.findings.exists() and not c.findings.read_text().strip()]
    assert positive, f"{code} has no positive golden case"
    assert negative, f"{code} has no negative golden case"
