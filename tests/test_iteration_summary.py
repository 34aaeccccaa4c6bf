"""Per-iteration judgement (issue 20, item 3): a fixable finding in a loop names the other
lines of the same iteration that still read the device after the fixes of the user's tier."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from nosync_fix.config import Settings
from nosync_fix.engine import process_source
from nosync_fix.findings import Finding
from nosync_fix.iteration import _loop_of_each

STILL = "the iteration still syncs at"


def check(source: str, **settings: object) -> dict[tuple[int, str], str]:
    """The findings' messages by (line, code), lines counted in ``source`` (the
    messages count the ``import torch`` put first)."""
    result = process_source("import torch\n" + textwrap.dedent(source), "train.py",
                            Settings(**settings), fix=False)
    return {(f.line - 1, f.code): f.message for f in result.findings}


REMAINING = """\
    def train(model, loader, bar):
        total = 0.0
        for batch in loader:
            loss = model(batch)
            total += loss.item()
            bar.set_postfix(loss=loss.detach().item())
        return total
"""


def test_a_fix_that_leaves_a_read_in_the_iteration_names_it():
    found = check(REMAINING)
    # line 6 of REMAINING is line 7 of the file, after the import
    assert found[(5, "NSY201")].endswith("; the iteration still syncs at line 7 (NSY906)")
    assert STILL not in found[(6, "NSY906")]  # no fix of its own: nothing to qualify


def test_a_loop_cleared_by_its_fixes_says_nothing_more():
    found = check("""\
        def train(model, loader):
            total = 0.0
            count = 0.0
            for batch in loader:
                loss = model(batch)
                total += loss.item()
                count += loss.sum().item()
            return total, count
        """)
    assert found and all(STILL not in message for message in found.values())


def test_a_read_outside_the_loop_is_not_the_iteration():
    found = check("""\
        def train(model, loader, bar):
            total = 0.0
            for batch in loader:
                total += model(batch).item()
            bar.set_postfix(loss=model(None).item())
            return total
        """)
    assert all(STILL not in message for message in found.values())


def test_nested_loops_judge_the_innermost_iteration():
    found = check("""\
        def train(model, epochs, loader, bar):
            for epoch in epochs:
                total = 0.0
                for batch in loader:
                    total += model(batch).item()
                bar.set_postfix(loss=model(epoch).item())
            return total
        """)
    # the inner loop's iteration reads nothing else; the outer one's read is not in it
    assert STILL not in found[(5, "NSY201")]


def test_a_read_in_a_function_the_loop_calls_is_out_of_scope():
    found = check("""\
        def log(bar, loss):
            bar.set_postfix(loss=loss.detach().item())

        def train(model, loader, bar):
            total = 0.0
            for batch in loader:
                loss = model(batch)
                total += loss.item()
                log(bar, loss)
            return total
        """)
    assert STILL not in found[(8, "NSY201")]


def test_a_read_in_a_function_defined_in_the_loop_is_not_the_iteration():
    found = check("""\
        def train(model, loader, bar):
            total = 0.0
            for batch in loader:
                loss = model(batch)
                total += loss.item()
                def log():
                    bar.set_postfix(loss=loss.detach().item())
            return total
        """)
    assert STILL not in found[(5, "NSY201")]


# -- the per-loop summary of --check -------------------------------------------------------


def check_output(tmp_path, source: str, *args: str) -> str:
    from click.testing import CliRunner

    from nosync_fix.cli import main

    path = tmp_path / "train.py"
    path.write_text("import torch\n" + textwrap.dedent(source), encoding="utf-8")
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "-j", "1", "--check",
                                       *args, str(path)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    return result.output.replace(str(path), "train.py")


def test_check_summarises_a_loop_with_a_remaining_read(tmp_path):
    out = check_output(tmp_path, REMAINING)
    assert ("loop at train.py:4: 2 host reads per iteration, 1 after the offered fixes: "
            "line 7 (NSY906)") in out.splitlines()


def test_check_summarises_a_loop_cleared_by_its_fixes(tmp_path):
    out = check_output(tmp_path, """\
        def train(model, loader):
            total = 0.0
            for batch in loader:
                loss = model(batch)
                total += loss.item()
            return total
        """, "--unsafe-fixes")  # this accumulation is an unsafe fix: judged at that tier
    assert "loop at train.py:4: 1 host read per iteration, 0 after the offered fixes" in (
        out.splitlines())


def test_check_summarises_nested_loops_each_on_its_own(tmp_path):
    out = check_output(tmp_path, """\
        def train(model, epochs, loader, bar):
            for epoch in epochs:
                total = 0.0
                for batch in loader:
                    loss = model(batch)
                    total += loss.item()
                bar.set_postfix(loss=model(epoch).item())
            return total
        """, "--unsafe-fixes")
    loops = [line for line in out.splitlines() if line.startswith("loop at")]
    # the outer loop offers no fix of its own: only the inner one is summarised
    assert loops == ["loop at train.py:5: 1 host read per iteration, 0 after the offered fixes"]


def test_no_summary_without_a_fix_in_a_loop_or_when_quiet(tmp_path):
    source = """\
        def train(model, loader, bar):
            for batch in loader:
                bar.set_postfix(loss=model(batch).item())
        """
    assert "Per loop:" not in check_output(tmp_path, source)
    assert "Per loop:" not in check_output(tmp_path, REMAINING, "--quiet")


# -- the loop of each finding, fast, against its definition -----------------------------------


def _defined_loop_of_each(lines, spans, cuts):
    """The definition: the innermost span around the line that holds no cut around it."""
    found = []
    for line in lines:
        own = [s for s in spans if s[0] <= line <= s[1]
               and not any(s[0] <= a and b <= s[1] and a <= line <= b for a, b in cuts)]
        found.append(min(own, key=lambda s: s[1] - s[0], default=None))
    return found


@st.composite
def _nested_spans(draw, first: int = 1, last: int = 60, depth: int = 0) -> list:
    """Spans that nest or are apart, as loop statements' lines do."""
    spans, line = [], first
    while line <= last and draw(st.booleans()):
        start = draw(st.integers(line, last))
        end = draw(st.integers(start, min(last, start + 20)))
        spans.append((start, end))
        if depth < 3 and end > start:
            spans += draw(_nested_spans(start + 1, end, depth + 1))
        line = end + 1
    return spans


@settings(max_examples=300, deadline=None)
@given(_nested_spans(), st.lists(st.tuples(st.integers(1, 60), st.integers(0, 6)), max_size=6),
       st.lists(st.integers(1, 62), min_size=1, max_size=20))
def test_the_loop_of_each_finding_is_the_innermost_loop_around_it(spans, cut_parts, lines):
    """Cuts (functions, classes and lambdas in a loop) may overlap each other (two lambdas
    on a line); loops nest. The fast search answers as the definition does."""
    cuts = [(a, a + length) for a, length in cut_parts]
    findings = [Finding(code="NSY906", message="", filename="f.py", line=line, column=1,
                        end_line=line, end_column=2) for line in lines]
    assert _loop_of_each(findings, spans, cuts) == _defined_loop_of_each(lines, spans, cuts)


def test_spans_that_do_not_nest_are_asked_one_by_one():
    spans, cuts = [(1, 10), (5, 15)], [(6, 6)]
    findings = [Finding(code="NSY906", message="", filename="f.py", line=line, column=1,
                        end_line=line, end_column=2) for line in (3, 6, 12)]
    assert _loop_of_each(findings, spans, cuts) == _defined_loop_of_each([3, 6, 12], spans,
                                                                         cuts)
