"""Rule documentation, generated from the rules themselves.

Each rule's page is written once, in the rule's docstring. From it come
``nosync-fix --explain CODE``, ``docs/rules/<CODE>.md`` and the rules table in
README.md. ``python -m nosync_fix.docs`` rewrites the generated files; the test
suite fails when they are out of date.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from .rules import all_rules

TABLE_START = "<!-- rules-table:start -->"
TABLE_END = "<!-- rules-table:end -->"


def rules_table() -> str:
    """The Markdown rules table: code, name, fix, summary."""
    lines = ["| code | name | fix | summary |", "| --- | --- | --- | --- |"]
    for rule in all_rules():
        lines.append(f"| [{rule.code}](docs/rules/{rule.code}.md) | {rule.name} | "
                     f"{rule.fix_kind} | {rule.summary} |")
    return "\n".join(lines)


def with_rules_table(readme: str) -> str:
    """``readme`` with the text between the table markers replaced by the current table."""
    pattern = re.compile(re.escape(TABLE_START) + ".*?" + re.escape(TABLE_END), re.S)
    if not pattern.search(readme):
        raise ValueError("README.md has no rules-table markers")
    return pattern.sub(lambda _: f"{TABLE_START}\n{rules_table()}\n{TABLE_END}", readme)


def rule_pages() -> dict[str, str]:
    """File name -> content for docs/rules/."""
    return {f"{rule.code}.md": rule.page() for rule in all_rules()}


def write(root: Path) -> list[Path]:
    """Regenerate docs/rules/ and the README table under ``root``; return changed files."""
    changed = []
    folder = root / "docs" / "rules"
    folder.mkdir(parents=True, exist_ok=True)
    pages = rule_pages()
    for stale in folder.glob("*.md"):
        if stale.name not in pages:
            stale.unlink()
            changed.append(stale)
    for name, content in pages.items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8")
            changed.append(path)
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    updated = with_rules_table(text)
    if updated != text:
        readme.write_text(updated, encoding="utf-8")
        changed.append(readme)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nosync_fix.docs",
        description="Regenerate docs/rules/*.md and the README's rules table from the rules.")
    parser.add_argument("root", nargs="?", type=Path, default=Path.cwd(),
                        help="the project folder, holding README.md (default: here)")
    root = parser.parse_args(argv).root
    if not (root / "README.md").is_file():
        print(f"error: {root}: no README.md here; give the project folder", file=sys.stderr)
        return 2
    for path in write(root):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
