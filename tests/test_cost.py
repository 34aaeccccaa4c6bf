"""Worst-case cost (issue 19): work linear in a file's size, a per-file size limit, and a
check that does not keep every file's text.

The growth tests count Python function calls (deterministic, unlike time on a shared
machine) for a pathological input and for the same input twice as large: linear work
doubles, quadratic work quadruples. Before the fixes the ratios were 5.2 (a sum of reads),
3.1 (a function rebinding its names) and 3.5 (an ``elif`` chain of host tests); after,
1.9, 2.1 and 2.0.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from nosync_fix.cli import main
from nosync_fix.config import (
    DEFAULT_MAX_FILE_SIZE,
    ConfigError,
    Settings,
    format_size,
    parse_size,
    settings_from_table,
)
from nosync_fix.engine import process_source
from nosync_fix.runner import Mode, run

_SPEC = importlib.util.spec_from_file_location(
    "pathological", Path(__file__).resolve().parents[1] / "benchmarks" / "pathological.py")
pathological = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
_SPEC.loader.exec_module(pathological)  # type: ignore[union-attr]

TRAIN = textwrap.dedent("""\
    import torch


    def train(model, loader, optimizer):
        total = 0.0
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
        return total
    """)


def _calls(source: str) -> int:
    """Python function calls made while checking ``source`` (all rules, as ``--check``)."""
    count = 0

    def profile(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal count
        if event == "call":
            count += 1

    process_source(source, "train.py", Settings(), fix=False, with_edits=False)  # warm
    sys.setprofile(profile)
    try:
        result = process_source(source, "train.py", Settings(), fix=False, with_edits=False)
    finally:
        sys.setprofile(None)
    assert result.error is None, result.error
    return count


@pytest.mark.parametrize(("make", "small"), [
    (pathological.sum_of_reads, 40),
    (pathological.long_function, 200),
    (lambda n: pathological.elif_chain(n, host=True), 50),
    (pathological.array_chain, 100),
    (pathological.copy_fan, 10),
    (pathological.forward_fan, 20),
    (pathological.logger_fan, 20),
], ids=["sum-of-reads", "long-function", "elif-chain", "array-chain", "copy-fan",
        "forward-fan", "logger-fan"])
def test_work_grows_linearly(make, small: int) -> None:
    ratio = _calls(make(2 * small)) / _calls(make(small))
    assert ratio < 2.5, f"doubling the input multiplied the work by {ratio:.2f}"


# -- the per-file size limit -------------------------------------------------------------------


def test_parse_size() -> None:
    assert parse_size(1234) == 1234
    assert parse_size("2MB") == 2_000_000
    assert parse_size("1.5 mb") == 1_500_000
    assert parse_size("500KB") == 500_000
    assert parse_size("10") == 10
    for bad in ("two", "5 TB", True, 1.5, ""):
        with pytest.raises(ConfigError):
            parse_size(bad)
    assert format_size(2_000_000) == "2 MB"
    assert format_size(1_500_000) == "1.5 MB"
    assert format_size(12) == "12 bytes"


def test_max_file_size_in_config() -> None:
    assert Settings().max_file_size == DEFAULT_MAX_FILE_SIZE
    assert settings_from_table({"max-file-size": "3MB"}).max_file_size == 3_000_000
    assert settings_from_table({"max-file-size": 4096}).max_file_size == 4096
    with pytest.raises(ConfigError, match="max-file-size"):
        settings_from_table({"max-file-size": "big"})
    with pytest.raises(ConfigError, match="max-file-size must be positive"):
        settings_from_table({"max-file-size": 0})


def test_a_file_over_the_limit_is_skipped_with_one_warning(project: Path) -> None:
    (project / "big.py").write_text(TRAIN + "# padding\n" * 200, encoding="utf-8")
    (project / "small.py").write_text(TRAIN, encoding="utf-8")
    result = CliRunner().invoke(main, ["--isolated", "--check", "--no-cache",
                                       "--max-file-size", "1KB", "."])
    assert result.exit_code == 1  # small.py's finding; the skip is no error
    assert "small.py:10:" in result.stdout
    assert "big.py:" not in result.stdout
    warnings = [line for line in result.stderr.splitlines() if "big.py" in line]
    assert warnings == ["warning: big.py: skipped: 2.2 KB is over the limit of 1 KB per file "
                        "(max-file-size, which --max-file-size or [tool.nosync-fix] can "
                        "raise)"]


def test_the_limit_comes_from_pyproject(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.nosync-fix]\nmax-file-size = "1KB"\n',
                                            encoding="utf-8")
    (project / "big.py").write_text(TRAIN + "# padding\n" * 200, encoding="utf-8")
    result = CliRunner().invoke(main, ["--check", "--no-cache", "big.py"])
    assert result.exit_code == 0
    assert "warning: big.py: skipped:" in result.stderr
    # nothing of a skipped file is written in fix mode either
    before = (project / "big.py").read_bytes()
    result = CliRunner().invoke(main, ["--no-cache", "big.py"])
    assert result.exit_code == 0 and (project / "big.py").read_bytes() == before


def test_stdin_over_the_limit_is_echoed_unchanged() -> None:
    result = CliRunner().invoke(main, ["--isolated", "--max-file-size", "100", "-"],
                                input=TRAIN)
    assert result.exit_code == 0
    assert result.stdout == TRAIN
    assert "warning: -: skipped:" in result.stderr


# -- what a check keeps ------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_check_keeps_findings_not_text(project: Path, jobs: int) -> None:
    for i in range(5):
        (project / f"train{i}.py").write_text(TRAIN, encoding="utf-8")
    outcomes = run(["."], Settings(), Mode.CHECK, jobs=jobs)
    assert len(outcomes) == 5
    for outcome in outcomes:
        assert outcome.error is None and outcome.result is not None
        assert [f.code for f in outcome.result.findings] == ["NSY201"]
        assert outcome.result.original == outcome.result.fixed == ""
        assert outcome.result.fixed_bytes == b""
    # a diff still carries the texts it needs
    outcomes = run(["."], Settings(), Mode.DIFF, jobs=jobs)
    assert all(o.result is not None and o.result.diff for o in outcomes)


# -- LibCST's scopes, without asking every call's qualified names ------------------------------

_TYPING_SOURCES = [
    'import typing\nx = typing.cast("List[int]", y)\nT = typing.TypeVar("T", "Foo")\n',
    'from typing import cast as c, NewType\nx = c("Foo", y)\nU = NewType("U", "Bar")\n',
    'from typing import cast\ndef f(y):\n    cast = 1\n    return cast("Foo", y)\n',
    'class typing:\n    cast = print\n    z = cast("Foo")\n',
    'def f(y):\n    z = late("Foo", y)\n    from typing import cast as late\n'
    '    return late("Bar", z)\n',
    'import a.b as m, typing as t\nm.cast("Foo")\nt.cast("Foo", 1)\nprint("Foo")\n'
    'def g():\n    global t\n    import typing as t\n    t.cast("Baz", 1)\n',
    'import torch\nfor i in range(3):\n    loss = torch.zeros(())\n    loss.backward()\n'
    '    x = torch.ones(3).sum()\n',
]


@pytest.mark.parametrize("source", _TYPING_SOURCES)
def test_scopes_equal_libcst_around_typing_calls(source: str) -> None:
    import libcst as cst
    from libcst.metadata import ScopeProvider

    from nosync_fix.analysis.base import resolve_alone

    def summary(scopes) -> list:  # type: ignore[no-untyped-def]
        rows = []
        for scope in {s for s in scopes.values() if s is not None}:
            for access in scope.accesses:
                rows.append((type(scope).__name__, getattr(access.node, "value", "?"),
                             access.is_annotation, access.is_type_hint,
                             sorted(type(r).__name__ + r.name for r in access.referents)))
            rows += [(type(scope).__name__, a.name, type(a).__name__)
                     for a in scope.assignments]
        return sorted(rows, key=repr)

    module = cst.parse_module(source)
    ours = resolve_alone(cst.MetadataWrapper(module, unsafe_skip_copy=True), ScopeProvider)
    theirs = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    assert summary(ours) == summary(theirs)
