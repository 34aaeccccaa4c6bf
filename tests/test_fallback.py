"""NSY906, the fallback: every hot-path read that no other rule reports, and only those."""

from __future__ import annotations

import textwrap

from nosync_fix.config import Settings
from nosync_fix.engine import process_source

SOURCE = textwrap.dedent("""\
    import torch


    def train(model, optimizer, loader):
        total = 0.0
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
            unused = loss.item()
        return total
    """)


def _findings(source: str, **settings) -> list[tuple[int, str]]:
    result = process_source(source, "train.py", Settings(**settings), fix=False)
    assert result.error is None
    return [(f.line, f.code) for f in result.findings]


def test_reports_only_what_no_other_rule_reports() -> None:
    assert _findings(SOURCE) == [(10, "NSY201"), (11, "NSY906")]


def test_coverage_does_not_depend_on_the_selection() -> None:
    # Selected alone, NSY906 still leaves NSY201's read to NSY201 ...
    assert _findings(SOURCE, select=("NSY906",)) == [(11, "NSY906")]
    # ... and ignoring NSY201 silences that read instead of turning it into an NSY906.
    assert _findings(SOURCE, ignore=("NSY201",)) == [(11, "NSY906")]
    assert _findings(SOURCE, ignore=("NSY906",)) == [(10, "NSY201")]


def test_suppressions() -> None:
    # A read whose own rule is suppressed stays that rule's.
    source = SOURCE.replace("total += loss.item()", "total += loss.item()  # noqa: NSY201")
    assert _findings(source) == [(11, "NSY906")]
    for comment in ("# noqa: NSY906", "# noqa: NSY9", "# noqa"):
        source = SOURCE.replace("unused = loss.item()", f"unused = loss.item()  {comment}")
        assert _findings(source) == [(10, "NSY201")], comment


def test_selected_alone_it_fixes_nothing() -> None:
    result = process_source(SOURCE, "train.py", Settings(select=("NSY906",)), fix=True)
    assert result.fixed == SOURCE and not result.applied


def test_after_the_fixes_the_fallback_reports_what_is_left() -> None:
    result = process_source(SOURCE, "train.py", Settings(), fix=True)
    assert [f.code for f in result.applied] == ["NSY201"]
    assert [f.code for f in result.findings] == ["NSY906"]


def test_the_message_says_what_the_read_is_and_why_there_is_no_fix() -> None:
    result = process_source(SOURCE, "train.py", Settings(), fix=False)
    message = result.findings[-1].message
    assert "`loss.item()` reads a device value into a Python number in a loop" in message
    assert "No fix is offered: `unused` is never used; delete the read" in message


def test_cold_code_and_test_files_are_left_alone() -> None:
    cold = "import torch\n\n\ndef summary(t):\n    return t.sum().item()\n"
    assert _findings(cold) == []
    assert process_source(SOURCE, "test_train.py", Settings(), fix=False).findings == ()
