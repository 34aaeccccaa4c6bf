"""The generated documentation is in sync with the rules' own pages."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from nosync_fix.cli import main
from nosync_fix.docs import rule_pages, with_rules_table
from nosync_fix.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent


def test_docs_rules_folder_matches_rule_pages() -> None:
    folder = ROOT / "docs" / "rules"
    expected = rule_pages()
    actual = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.md")}
    assert actual == expected, "docs/rules is stale: run `python -m nosync_fix.docs`"


def test_readme_rules_table_is_current() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert with_rules_table(readme) == readme, (
        "the README rules table is stale: run `python -m nosync_fix.docs`")


def test_every_rule_has_an_explain_page() -> None:
    runner = CliRunner()
    for rule in all_rules():
        result = runner.invoke(main, ["--explain", rule.code])
        assert result.exit_code == 0
        assert result.output.startswith(f"# {rule.code} {rule.name}")
        for heading in ("## What it does", "## Why is this slow?", "## Fix safety"):
            assert heading in result.output


def test_rule_codes_follow_the_catalogue() -> None:
    for rule in all_rules():
        assert rule.code.startswith("NSY") and len(rule.code) == 6 and rule.code[3:].isdigit()
        assert rule.name == rule.name.lower() and " " not in rule.name
