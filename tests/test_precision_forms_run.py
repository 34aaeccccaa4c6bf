"""Forms found wrong by the real-code precision review (issue 20), run before and after the
fixer: the guards that now keep them unrewritten, and the rewrites still offered beside
them, give the same output."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nosync_fix import fix_code

torch = pytest.importorskip("torch")

#: A periodic log through a logger nosync-fix cannot defer, then a print of the same
#: values (diffusers' LLaDA2 script): the print is left as it is; a print after a
#: standard logger's call, and one after a running sum, are deferred.
LOGGED_THEN_PRINTED = textwrap.dedent("""
    import logging
    import sys

    import torch

    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
    logger = logging.getLogger("run")


    class Tracker:
        def info(self, template, *args):
            sys.stdout.write("tracker " + template % args + "\\n")


    def train(model, data, optimizer, tracker, every):
        total = 0.0
        for step, (x, y) in enumerate(data):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if step % every == 0:
                tracker.info("step %d loss %.4f", step, loss.item())
                print(f"step={step} loss={loss.item():.4f}")
            if step % every == 1:
                logger.info("step %d loss %.4f", step, loss.item())
                print(f"logged {loss.item():.4f}")
            total += loss.item()
            print(f"after the sum {loss.item():.3f}")
        return total


    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(7)]
    print(f"total {train(model, data, optimizer, Tracker(), 3):.6f}")
""")


def _run(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout


def test_print_after_a_read_that_stays_is_not_deferred(tmp_path: Path) -> None:
    fixed = fix_code(LOGGED_THEN_PRINTED, filename="train.py")
    assert fixed.error is None
    kept = 'print(f"step={step} loss={loss.item():.4f}")'
    assert kept in fixed.fixed
    assert 'deferred_print(fmt("logged {:.4f}", item(loss)))' in fixed.fixed
    assert 'deferred_print(fmt("after the sum {:.3f}", item(loss)))' in fixed.fixed
    blocked = [f for f in fixed.findings if f.code == "NSY301"]
    assert len(blocked) == 1 and "the line before already reads the device" in (
        blocked[0].message)
    before = _run(tmp_path, "before.py", LOGGED_THEN_PRINTED)
    after = _run(tmp_path, "after.py", fixed.fixed)
    assert before == after and before.count("\n") == 7 + 2 * 3 + 2 * 2 + 1


#: Rotary factors picked by a device length (diffusers' OmniGen rotary embedding): two
#: lists copied to the device on the taken path only. No fix; the form that selects
#: between tensors made once is rewritten, and gives the same values.
FACTORS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Rotary(nn.Module):
        def __init__(self, short, long, limit):
            super().__init__()
            self.short_factor, self.long_factor, self.limit = short, long, limit
            self.register_buffer("short", torch.tensor(short), persistent=False)
            self.register_buffer("long", torch.tensor(long), persistent=False)

        def forward(self, x: torch.Tensor, positions: torch.Tensor):
            length = torch.max(positions) + 1
            if length > self.limit:
                factors = torch.tensor(self.long_factor, dtype=torch.float32, device=x.device)
            else:
                factors = torch.tensor(self.short_factor, dtype=torch.float32, device=x.device)
            return x * factors

        def select_step(self, x: torch.Tensor, positions: torch.Tensor):
            length = torch.max(positions) + 1
            if length > self.limit:
                factors = self.long
            else:
                factors = self.short
            return x * factors
""")


def test_host_data_copies_are_not_selected_and_buffers_are() -> None:
    fixed = fix_code(FACTORS, unsafe_fixes=True)
    assert fixed.error is None
    assert "torch.where(length > self.limit, self.long, self.short)" in fixed.fixed
    assert "factors = torch.tensor(self.long_factor" in fixed.fixed  # forward untouched
    [copy] = [f for f in fixed.findings if f.code == "NSY101"]
    assert "copies host data to the device" in copy.message
    before, after = {}, {}
    exec(compile(FACTORS, "before", "exec"), before)
    exec(compile(fixed.fixed, "after", "exec"), after)
    args = ([1.0, 1.5, 2.0], [4.0, 8.0, 16.0], 5)
    old, new = before["Rotary"](*args), after["Rotary"](*args)
    x = torch.randn(2, 3)
    for positions in (torch.arange(3), torch.arange(5), torch.arange(9), torch.tensor([7])):
        for name in ("forward", "select_step"):
            a, b = getattr(old, name)(x, positions), getattr(new, name)(x, positions)
            assert a.dtype == b.dtype and torch.equal(a, b)


def test_every_where_fix_states_its_eager_cost() -> None:
    from nosync_fix.rules.nsy101_branch_to_where import EAGER_COST

    fixed = fix_code(FACTORS, unsafe_fixes=True)
    [where] = [f for f in fixed.applied if f.code == "NSY101"]
    assert where.message.endswith(EAGER_COST) and "several times slower" in EAGER_COST
    [copy] = [f for f in fixed.findings if f.code == "NSY101"]
    assert EAGER_COST not in copy.message  # no fix, nothing to warn about
