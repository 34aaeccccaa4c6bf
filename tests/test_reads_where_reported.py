"""The lines NSY906 reports in these golden programs are the lines that read the device
when the program runs, and no others (counted by the host-read counter of
``nosync-verify``):

- ``text_and_truth``: text made with ``%``, ``str``, ``repr`` or ``format`` of a tensor,
  and ``not t`` or ``t and x`` outside a condition, each read it; shapes, dtypes, lengths
  and a tensor that is the value of ``or`` do not;
- ``compared_and_counted``: ``max``/``min`` of a tensor, ``any``/``all`` of one and
  ``range`` of one read it; host numbers, a CPU tensor, a ``key=`` of host values and
  ``any``/``all`` of host values do not. ``max`` of one tensor
  (over its elements) reads too, and is left unreported on purpose (see NSY906);
- ``sequence_lookup``: a list, tuple or string indexed by a tensor reads it; a dict's
  lookup, a tensor indexed by a tensor and host indices do not;
- ``membership``: ``x in t`` and ``x not in t`` of a tensor read it; ``in`` of a list, a
  dict, a shape or a string does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nosync_fix import check_code

torch = pytest.importorskip("torch")
from nosync_fix.verify.syncs import count_syncs  # noqa: E402

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "NSY906"


def _reported_and_read(name: str, *args) -> tuple[set[int], set[int]]:  # type: ignore[no-untyped-def]
    path = GOLDEN / f"{name}.in.py"
    source = path.read_text(encoding="utf-8")
    reported = {f.line for f in check_code(source, filename=str(path), select=["NSY906"])}
    namespace: dict = {}
    # Run on the CPU, where the counter counts every read: the lines stay where they are.
    exec(compile(source.replace('"cuda"', '"cpu"'), str(path), "exec"), namespace)
    with count_syncs(str(path), "cpu") as reads:
        namespace["train"](torch.nn.Linear(3, 1), [torch.randn(2, 3) for _ in range(2)],
                           lambda *values: None, *args)
    return reported, {line for line, _ in reads.by_site if line}


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")
def test_text_and_truth_tests_read_where_reported() -> None:
    reported, read = _reported_and_read("text_and_truth", True)
    assert len(reported) == 7
    assert reported == read, (sorted(reported), sorted(read))


def test_comparisons_and_counts_read_where_reported() -> None:
    reported, read = _reported_and_read("compared_and_counted", [[1, 2], [3]])
    # The CPU tensor's comparison reads too, but on an accelerator it waits for nothing;
    # `max` of one tensor reads, unreported on purpose.
    lines = (GOLDEN / "compared_and_counted.in.py").read_text(encoding="utf-8").splitlines()
    on_host = {n for n, line in enumerate(lines, 1) if "torch.zeros(())" in line}
    unreported = {n for n, line in enumerate(lines, 1) if "peak = max(" in line}
    assert len(reported) == 4 and len(on_host) == len(unreported) == 1
    assert reported == read - on_host - unreported, (sorted(reported), sorted(read))


def test_sequence_lookups_read_where_reported() -> None:
    # `table`, of unknown kind, is an object of its own here, whose lookup reads nothing.
    class Table:
        def __getitem__(self, key):  # type: ignore[no-untyped-def]
            return None

    reported, read = _reported_and_read("sequence_lookup", Table())
    assert len(reported) == 3
    assert reported == read, (sorted(reported), sorted(read))


def test_membership_tests_read_where_reported() -> None:
    reported, read = _reported_and_read("membership", [2, 3])
    # A tensor made on the CPU reads too, but on an accelerator it waits for nothing; the
    # test after the loop reads once, off the hot path.
    lines = (GOLDEN / "membership.in.py").read_text(encoding="utf-8").splitlines()
    on_host = {n for n, line in enumerate(lines, 1) if "torch.arange(3)" in line}
    once = {n for n, line in enumerate(lines, 1) if line.strip() == "return 5 in eos"}
    assert len(reported) == 3 and len(on_host) == len(once) == 1
    assert reported == read - on_host - once, (sorted(reported), sorted(read))
