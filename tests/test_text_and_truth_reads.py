"""The lines NSY906 reports in ``golden/NSY906/text_and_truth`` are the lines that read
the device when the program runs, and no others: text made with ``%``, ``str``, ``repr``
or ``format`` of a tensor, and ``not t`` or ``t and x`` outside a condition, each read it
(counted by the host-read counter of ``nosync-verify``); shapes, dtypes, lengths and a
tensor that is the value of ``or`` do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from nosync_fix import check_code

torch = pytest.importorskip("torch")
from nosync_fix.verify.syncs import count_syncs  # noqa: E402

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "NSY906" / "text_and_truth.in.py"


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")
def test_the_reported_lines_are_the_lines_that_read_the_device() -> None:
    source = GOLDEN.read_text(encoding="utf-8")
    reported = {f.line for f in check_code(source, filename=str(GOLDEN), select=["NSY906"])}

    namespace: dict = {}
    exec(compile(source, str(GOLDEN), "exec"), namespace)
    model = torch.nn.Linear(3, 1)
    loader = [torch.randn(2, 3) for _ in range(2)]
    with count_syncs(str(GOLDEN), "cpu") as reads:
        namespace["train"](model, loader, lambda *args: None, True)
    read_lines = {line for line, _ in reads.by_site if line}

    assert len(reported) == 7
    assert reported == read_lines, (sorted(reported), sorted(read_lines))
