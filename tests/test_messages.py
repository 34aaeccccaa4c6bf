"""Messages fit the code they point at (issue 20): periodic code is not "every step", CPU
tensors are not device values, and `dist.barrier` is not "remove it"."""

from __future__ import annotations

from pathlib import Path

from nosync_fix import check_code

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def test_periodic_reads_are_not_every_step() -> None:
    source = (GOLDEN / "NSY903" / "periodic.in.py").read_text(encoding="utf-8")
    found = check_code(source, unsafe_fixes=True)
    timed = [f for f in found if f.code in ("NSY201", "NSY903")]
    assert len(timed) == 4
    for finding in timed:
        assert "whenever it runs (every N steps)" in finding.message, finding.message
        assert "every step" not in finding.message.replace("every N steps", "")
        assert "every iteration" not in finding.message


def test_reads_on_every_step_say_so() -> None:
    source = """
import torch


def train(model, loader):
    total = 0.0
    for x in loader:
        loss = model(x).sum()
        total += loss.item()
        cpu = loss.detach().cpu()
        print(cpu)
    return total
"""
    messages = {f.code: f.message for f in check_code(source, unsafe_fixes=True)}
    assert "reads the device every step" in messages["NSY201"]
    assert "on every iteration" in messages["NSY903"]


def test_synchronize_messages() -> None:
    source = """
import torch
import torch.distributed as dist


def train(model, loader):
    for step, x in enumerate(loader):
        model(x).sum().backward()
        dist.barrier()
        if step % 100 == 0:
            torch.cuda.synchronize()
        torch.cuda.synchronize()
"""
    found = check_code(source)
    assert [f.code for f in found] == ["NSY901", "NSY901"]  # dist.barrier is not reported
    periodic, every = found
    assert "whenever it runs" in periodic.message and "on every step" in every.message
    for finding in found:
        assert "keep it if a collective or another process depends on it" in finding.message


def test_sums_over_parameters_say_why_their_fix_is_unsafe() -> None:
    source = (GOLDEN / "NSY201" / "parameter_loops.in.py").read_text(encoding="utf-8")
    fixes = {f.line: f.fix for f in check_code(source, select=["NSY201"], unsafe_fixes=True)}
    assert sorted(fixes) == [10, 15, 23, 31]
    for line in (10, 15, 23):
        assert fixes[line] is not None and fixes[line].applicability.value == "unsafe"
        assert "the loop goes over parameters" in fixes[line].message
    assert fixes[31] is not None and fixes[31].applicability.value == "safe"
    assert "parameters" not in fixes[31].message
