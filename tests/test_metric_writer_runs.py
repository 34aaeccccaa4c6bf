"""NSY303's fix of a tensor handed to ``add_scalar``/``add_scalars`` records the same numbers.

TensorBoard's ``SummaryWriter`` turns a tensor it is handed into a number at once
(``make_np``: a copy to the host, then ``float`` of the squeezed array). The stand-in
writer below does the same, inside the program, so that its reads are counted as the
program's. The original and the fixed program run on the same data: the recorded events
must be identical (values to the last bit, types included) and the fixed loop must read
the device fewer times.
"""

from __future__ import annotations

import textwrap

import pytest

from nosync_fix import fix_code

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from nosync_fix.runtime import flush  # noqa: E402
from nosync_fix.verify.syncs import count_syncs  # noqa: E402

PROGRAM = """
    import numpy as np
    import torch


    class SummaryWriter:
        \"\"\"Records what TensorBoard's writer would write: a number made from the value.\"\"\"

        def __init__(self):
            self.events = []

        def _number(self, value):
            if isinstance(value, torch.Tensor):
                if value.dtype == torch.bfloat16:
                    value = value.to(torch.float16)
                value = value.detach().cpu().numpy()
            elif np.isscalar(value):
                value = np.array([value])
            value = value.squeeze()
            assert value.ndim == 0
            return float(value)

        def add_scalar(self, tag, scalar_value, global_step=None):
            self.events.append((tag, self._number(scalar_value), global_step))

        def add_scalars(self, main_tag, tag_scalar_dict, global_step=None):
            for tag, value in tag_scalar_dict.items():
                self.events.append((f"{main_tag}/{tag}", self._number(value), global_step))


    def run(batches, weight):
        writer = SummaryWriter()
        for step, batch in enumerate(batches):
            x = torch.as_tensor(batch)
            loss = ((x * weight) ** 2).mean()
            writer.add_scalar("loss", loss, step)
            writer.add_scalar("max", torch.amax(x), global_step=step)
            writer.add_scalar(tag="count", scalar_value=(x > 0).sum(), global_step=step)
            writer.add_scalars("parts", {"first": x[0], "sum": x.sum().item()}, step)
        return writer
"""


def test_a_tensor_handed_to_the_writer_is_recorded_the_same() -> None:
    source = textwrap.dedent(PROGRAM)
    result = fix_code(source, select=["NSY303"], unsafe_fixes=True, all_paths=True)
    assert result.error is None, result.error
    assert [f.line for f in result.applied] == [36, 37, 38, 39], result.fixed
    assert "item(loss)" in result.fixed and "item(x[0])" in result.fixed
    batches = [[0.5, -1.25, 3.0], [1e-3, 2.0, -7.5], [0.1, 0.2, 0.3]]
    weight = torch.tensor(1.5, dtype=torch.float64)
    recorded, reads = [], []
    for program in (source, result.fixed):
        namespace: dict = {}
        exec(compile(program, "<program>", "exec"), namespace)
        with count_syncs("<program>", "cpu") as count:
            writer = namespace["run"](batches, weight)
        flush()
        recorded.append(writer.events)
        reads.append(count.total)
    before, after = recorded
    assert len(before) == 15
    assert [(tag, type(v), v.hex(), s) for tag, v, s in before] == [
        (tag, type(v), v.hex(), s) for tag, v, s in after]
    assert reads[1] < reads[0], reads


def test_a_bfloat16_tensor_is_recorded_exactly_where_tensorboard_rounds_it() -> None:
    # The edge the rule page names: TensorBoard converts bfloat16 through float16, whose
    # range ends at 65504 (inf beyond); the deferred value is the tensor's own item().
    source = textwrap.dedent(PROGRAM).replace("x = torch.as_tensor(batch)",
                                              "x = torch.as_tensor(batch).bfloat16()")
    result = fix_code(source, select=["NSY303"], unsafe_fixes=True, all_paths=True)
    recorded = []
    for program in (source, result.fixed):
        namespace: dict = {}
        exec(compile(program, "<program>", "exec"), namespace)
        recorded.append(namespace["run"]([[1e5, 1.0, 2.0]], 1.0).events)
        flush()
    before, after = ({tag: v for tag, v, _ in events} for events in recorded)
    # beyond float16's range: inf before, the bfloat16 value after; the others the same
    assert before == {**after, "loss": float("inf"), "max": float("inf"),
                      "parts/first": float("inf")}
    assert after["max"] == after["parts/first"] == 99840.0 and after["count"] == 3.0
