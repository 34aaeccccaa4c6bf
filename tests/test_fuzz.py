"""Fuzzing the engine: generated programs through ``fix_code``.

For every program: ``fix_code`` does not raise; when it reports no error the
output parses and compiles; with nothing found the output is the input,
byte for byte; fixing the output again changes nothing (``fix(fix(x)) == fix(x)``).
Programs come from hypothesmith (any valid Python) and from
``tests/torch_programs.py`` (training loops on which the rules fire). A longer
run: ``python benchmarks/fuzz.py --minutes 10``.
"""

from __future__ import annotations

import ast
import warnings

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch_programs import torch_programs

from nosync_fix import FixResult, fix_code

#: The option sets each program is fixed with.
OPTIONS = ({}, {"unsafe_fixes": True, "all_paths": True})


def check_properties(source: str, **options: object) -> FixResult:
    """Assert the fuzzing properties for one program; the first result."""
    result = fix_code(source, **options)  # never raises
    if result.error is not None:
        assert result.fixed == result.original
        assert result.error.kind in ("parse", "internal"), result.error
        # An internal error is a bug unless LibCST cannot handle what Python accepts.
        assert result.error.kind == "parse" or "LibCST" in result.error.message, (
            result.error.message)
        return result
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compile(result.fixed, "<fixed>", "exec")
        ast.parse(result.fixed)
    if not result.findings and not result.applied:
        assert result.fixed == source
        assert result.fixed_bytes == source.encode("utf-8")
    again = fix_code(result.fixed, **options)
    assert again.error is None, again.error
    assert again.fixed == result.fixed, "fixing the fixed code changed it again"
    assert not again.applied, again.applied
    return result


#: hypothesmith compiles what it generates, and Python warns about `1()` and the like.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

_FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))


@_FUZZ
@given(hypothesmith.from_grammar(), st.sampled_from(OPTIONS))
def test_any_valid_program(source: str, options: dict) -> None:
    check_properties(source, **options)


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node(), st.sampled_from(OPTIONS))
def test_any_program_libcst_builds(source: str, options: dict) -> None:
    check_properties(source, **options)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(torch_programs(), st.sampled_from(OPTIONS))
def test_training_programs(source: str, options: dict) -> None:
    check_properties(source, **options)


def test_the_training_programs_make_the_rules_fire() -> None:
    """Not vacuous: a fixed sample of generated programs has findings and fixes."""
    found = fixed = 0

    @settings(max_examples=60, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(torch_programs())
    def count(source: str) -> None:
        nonlocal found, fixed
        result = fix_code(source, unsafe_fixes=True, all_paths=True)
        found += len(result.findings) + len(result.applied)
        fixed += result.changed

    count()
    assert found >= 20 and fixed >= 5, (found, fixed)
