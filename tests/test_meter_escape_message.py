"""NSY201's meter report names the first escaping use in source order, on every run.

LibCST keeps a name's accesses in a set whose order follows object addresses; the
message used to name `losses_m.avg` or `losses_m.val` depending on that order (timm
legacy_train.py). It now walks the uses in source order.
"""

from __future__ import annotations

import textwrap

import pytest

from nosync_fix import fix_code

_SOURCE = """
    from timm.utils import AverageMeter


    def train(model, loader, loss_fn, history):
        losses_m = AverageMeter()
        for x, y in loader:
            loss = loss_fn(model(x), y)
            losses_m.update(loss.item(), x.size(0))
            {first}, {second} = losses_m.{first}, losses_m.{second}
            history.append(({first}, {second}))
        return losses_m.sum
"""


@pytest.mark.parametrize(("first", "second"), [("avg", "val"), ("val", "avg")])
def test_meter_report_names_the_first_escaping_use(first: str, second: str) -> None:
    source = textwrap.dedent(_SOURCE.format(first=first, second=second))
    messages = set()
    for attempt in range(8):
        padding = [object() for _ in range(attempt * 97)]  # other addresses on each run
        result = fix_code(source, select=["NSY201"], unsafe_fixes=True)
        del padding
        messages |= {f.message for f in result.findings if f.code == "NSY201"}
    assert len(messages) == 1, messages
    message = messages.pop()
    assert f"`losses_m.{first}` is used as a value" in message, message
    assert f"losses_m.{second}`" not in message
