"""The generated documentation is in sync with the rules' own pages."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nosync_fix.cli import main
from nosync_fix.docs import rule_pages, with_rules_table
from nosync_fix.rules import all_rules

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

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


# -- first contact: the quickstart and the test command ------------------------------------------


def _quickstart() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quickstart", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_quickstart_installs_the_cpu_build_of_torch_first() -> None:
    # Without it, `pip install -e ".[test]"` on a machine without torch pulls a CUDA build
    # of several GB; a warning after the command comes too late.
    steps = [step.strip() for step in _quickstart()[0].split("&&")]
    assert steps[0].startswith("pip install torch=="), steps
    assert "--index-url https://download.pytorch.org/whl/cpu" in steps[0]
    assert steps[1] == 'pip install -e ".[test]"'


def test_the_readme_test_command_is_what_ci_runs() -> None:
    command = _quickstart()[1].split("#", 1)[0].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert command == ci[-1] == "pytest -n auto"
    assert "minutes" in _quickstart()[1]  # how long it takes, where the command is
    # `-n auto` is pytest-xdist's: the `test` extra the quickstart installs must bring it.
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]["test"]
    assert any(requirement.startswith("pytest-xdist") for requirement in extra), extra
    ci_torch = next(line for line in ci if "install" in line and "torch==" in line)
    assert ci_torch.split("torch==")[1].split('"')[0] in _quickstart()[0]  # the same torch


#: Calls that compile (torch.compile, Dynamo) or run the verifier, which compiles.
_COMPILING = {"torch.compile", "torch._dynamo.explain", "torch._dynamo.reset", "verify"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _calls(function: ast.AST) -> set[str]:
    return {_dotted(n.func) for n in ast.walk(function) if isinstance(n, ast.Call)}


def _marked_slow(node: ast.AST) -> bool:
    return any("slow" in _dotted(d.func if isinstance(d, ast.Call) else d)
               for d in getattr(node, "decorator_list", []))


def test_every_compiling_test_is_marked_slow() -> None:
    # `pytest -m "not slow"` is only as fast as this marker is complete.
    unmarked = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        module = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(s, ast.Assign) and _dotted(s.targets[0]) == "pytestmark"
               and "slow" in ast.unparse(s.value) for s in module.body):
            continue
        functions = {f.name: f for f in module.body if isinstance(f, ast.FunctionDef)}
        compiling = {name for name, f in functions.items() if _calls(f) & _COMPILING}
        while True:  # and the helpers that call them
            more = {name for name, f in functions.items() if _calls(f) & compiling} - compiling
            if not more:
                break
            compiling |= more
        unmarked += [f"{path.name}::{name}" for name in sorted(compiling)
                     if name.startswith("test_") and not _marked_slow(functions[name])]
    assert unmarked == []


def test_the_generator_takes_help_and_refuses_a_folder_without_readme(tmp_path, capsys) -> None:
    from nosync_fix import docs

    with pytest.raises(SystemExit) as exited:
        docs.main(["--help"])
    assert exited.value.code == 0 and "usage:" in capsys.readouterr().out
    assert docs.main([str(tmp_path)]) == 2
    assert "no README.md here" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing written
