"""The library API for refactoring tools, and the LibCST codemod command."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

import nosync_fix
from nosync_fix import (
    Applicability,
    ConfigError,
    FixResult,
    check_code,
    fix_code,
    fix_paths,
)
from nosync_fix.analysis import ModuleAnalysis
from nosync_fix.config import Settings
from nosync_fix.engine import apply_rewrites, process_source, splice
from nosync_fix.rewrite import Rewrite

SOURCE = textwrap.dedent("""\
    import torch


    def train(model, loader, criterion):
        total = 0.0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            total += loss.item()
        return total
    """)


def test_fix_code_returns_a_complete_result() -> None:
    result = fix_code(SOURCE, filename="train.py")
    assert isinstance(result, FixResult)
    assert result.original == SOURCE and result.changed
    assert "total += loss.detach()" in result.fixed
    assert result.diff.startswith("--- train.py\n+++ train.py\n")
    assert [f.code for f in result.applied] == ["NSY201"]
    assert result.findings == ()
    assert result.error is None


def test_check_code_findings_carry_fix_and_edits() -> None:
    (finding,) = check_code(SOURCE, filename="train.py")
    assert (finding.code, finding.line, finding.column) == ("NSY201", 9, 9)
    assert (finding.end_line, finding.end_column) == (9, 29)
    assert finding.fix is not None
    assert finding.fix.applicability is Applicability.SAFE
    assert finding.fix.edits and finding.fix.edits[0].line == 9


def test_select_ignore_and_unknown_codes() -> None:
    assert check_code(SOURCE, ignore=["NSY2"]) == []
    assert check_code(SOURCE, select=["NSY201"])
    with pytest.raises(ConfigError):
        check_code(SOURCE, select=["NSY0"])


def test_bad_source_does_not_raise_from_fix_code() -> None:
    result = fix_code("def f(:\n")
    assert result.error is not None and result.error.kind == "parse"
    assert result.fixed == result.original
    with pytest.raises(ValueError, match="cannot parse"):
        check_code("def f(:\n")


def test_fix_paths_write_and_dry_run(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(SOURCE)
    (dry,) = fix_paths([str(tmp_path)], write=False)
    assert dry.changed and not dry.written and path.read_text() == SOURCE
    (real,) = fix_paths([str(tmp_path)])
    assert real.written and "loss.detach()" in path.read_text()


@pytest.mark.parametrize("enabled", [True, False])
def test_a_file_leaves_no_cyclic_garbage_and_the_collector_as_it_was(
        tmp_path: Path, enabled: bool) -> None:
    path = tmp_path / "train.py"
    path.write_text(SOURCE)
    gc.collect()
    if not enabled:
        gc.disable()
    try:
        (outcome,) = fix_paths([str(path)], write=False)
        assert gc.isenabled() is enabled
        collected = gc.collect()
    finally:
        gc.enable()
    assert outcome.changed
    # LibCST's scopes hold the file's tree in cycles: the runner collects them itself,
    # unless the caller turned the collector off.
    assert (collected == 0) is enabled


def test_splice_keeps_lines_libcst_would_change() -> None:
    original = "x = 1\n\x0cy = 2\nz = 3\n"
    module = cst.parse_module(original)
    assert module.code != original  # LibCST drops the form feed
    rewritten = module.code.replace("z = 3", "z = 4")
    assert splice(original, module.code, rewritten) == "x = 1\n\x0cy = 2\nz = 4\n"


def test_overlapping_rewrites_wait_for_the_next_pass() -> None:
    wrapper = cst.MetadataWrapper(cst.parse_module("a = f(g(1))\n"))
    analysis = ModuleAnalysis(wrapper)
    outer = wrapper.module.body[0].body[0].value
    inner = outer.args[0].value
    first = Rewrite("outer").replace(outer, cst.parse_expression("h(0)"))
    second = Rewrite("inner").replace(inner, cst.parse_expression("k(1)"))
    module, accepted = apply_rewrites(wrapper.module, analysis.md, [first, second])
    assert accepted == [0]
    assert module.code == "a = h(0)\n"


def test_a_rewrite_that_does_not_compile_is_never_returned() -> None:
    from nosync_fix.rules import Rule

    class YieldEverywhere(Rule):
        """A deliberately broken rule: `yield` is not allowed at module level."""

        code = "NSY999"
        hot_paths_only = False

        def visit_Integer(self, node: cst.Integer) -> None:
            self.report(node, "broken", Rewrite("broken").replace(
                node, cst.parse_expression("(yield)")))

    source = "x = 1\n"
    result = process_source(source, "t.py", Settings(), fix=True, rules=[YieldEverywhere])
    assert result.error is not None and result.error.kind == "internal"
    assert "does not compile" in result.error.message
    assert result.fixed == result.original == source


def test_internal_errors_are_contained(monkeypatch) -> None:
    from nosync_fix.rules import nsy201_accumulate_on_device as rule

    def visit_AugAssign(self, node):  # type: ignore[no-untyped-def]
        raise RuntimeError("bug")

    monkeypatch.setattr(rule.AccumulateOnDevice, "visit_AugAssign", visit_AugAssign)
    result = process_source(SOURCE, "t.py", Settings(), fix=True)
    assert result.error is not None and "internal error (RuntimeError: bug" in (
        result.error.message)


def test_libcst_codemod_command(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(SOURCE)
    proc = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "-x", "--no-format",
         "nosync_fix.codemod.NoSyncFix", str(path)],
        capture_output=True, text=True, cwd=tmp_path,
        # The package under test, not whichever one the interpreter would find.
        env={**os.environ, "PYTHONPATH": str(Path(nosync_fix.__file__).parents[1])})
    assert proc.returncode == 0, proc.stderr
    assert path.read_text() == fix_code(SOURCE).fixed
