"""The accumulator forms of issue 18 run the same before and after NSY201's fix.

Each program is fixed (NSY201 only, unsafe fixes on where the case says so), then the
original and the fixed program run on the same data under the host-read counter: what
they print and return must be identical (floats to the last bit, types included), and
the fixed one must read the device fewer times (or as often, for the forms the rule must
leave alone).
"""

from __future__ import annotations

import contextlib
import io
import textwrap

import pytest

from nosync_fix import fix_code

torch = pytest.importorskip("torch")
from nosync_fix.verify.syncs import count_syncs  # noqa: E402


def _run(source: str, name: str, *args):  # type: ignore[no-untyped-def]
    namespace: dict = {}
    exec(compile(source, "<program>", "exec"), namespace)
    printed = io.StringIO()
    torch.manual_seed(0)
    with contextlib.redirect_stdout(printed), count_syncs("<program>", "cpu") as reads:
        result = namespace[name](*args)
    return result, printed.getvalue(), reads.total


def _same(before, after, where: str = "result") -> None:  # type: ignore[no-untyped-def]
    assert type(after) is type(before), (where, before, after)
    if isinstance(before, dict):
        assert list(after) == list(before), where
        for key in before:
            _same(before[key], after[key], f"{where}[{key!r}]")
    elif isinstance(before, (list, tuple)):
        assert len(after) == len(before), where
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            _same(b, a, f"{where}[{i}]")
    elif isinstance(before, float):
        assert after.hex() == before.hex(), (where, before, after)
    else:
        assert after == before, (where, before, after)


def check(source: str, args: tuple, *, unsafe: bool = False, fixed: bool = True,
          name: str = "run") -> str:
    """Fix ``source``, run both, compare; return the fixed source."""
    source = textwrap.dedent(source)
    result = fix_code(source, select=["NSY201"], unsafe_fixes=unsafe, all_paths=True)
    assert result.error is None, result.error
    if not fixed:
        assert result.fixed == source, result.fixed
        return source
    assert result.fixed != source, "the fixer left the program unchanged"
    before, printed_before, reads_before = _run(source, name, *args)
    after, printed_after, reads_after = _run(result.fixed, name, *args)
    assert printed_after == printed_before
    _same(before, after)
    assert reads_after < reads_before, (reads_before, reads_after, result.fixed)
    return result.fixed


def _losses(n: int, seed: int = 0) -> list:
    generator = torch.Generator().manual_seed(seed)
    return [torch.rand((), generator=generator) * 3 + 0.01 for _ in range(n)]


# -- h: CPU tensors are left alone ------------------------------------------------------------

def test_sums_over_cpu_tensors_are_not_rewritten() -> None:
    check("""
        import torch

        def run(batches):
            total = 0.0
            hits = 0
            for batch in batches:
                counts = torch.tensor(batch, device="cpu")
                total += counts.sum().item()
                scores = (counts * 2).cpu()
                hits += (scores > 1).sum().item()
            return total, hits
    """, ([[1, 2], [3, 4]],), unsafe=True, fixed=False)


# -- integer reads summed into a float: float64, as Python -----------------------------------

def test_integer_counts_into_a_float_sum_stay_exact_past_float32() -> None:
    fixed = check("""
        import torch

        def run(sizes, device):
            seen = 0.0
            for n in sizes:
                mask = torch.ones(n, dtype=torch.bool, device=device)
                seen += mask.sum().item()
            print(seen)
            return seen
    """, ([2**24, 1, 1, 3], "cpu"))
    assert ".double()" in fixed


# -- c: a read divided by a host attribute -------------------------------------------------

def test_read_divided_by_a_host_attribute() -> None:
    class Args:
        accum_steps = 3

    fixed = check("""
        import torch

        def run(losses, args):
            total = 0.0
            for loss in losses:
                total += loss.item() / args.accum_steps
            print(f"{total:.17g}")
            return total
    """, (_losses(50), Args()), unsafe=True)  # `loss`, a loop variable, is only likely a tensor
    assert "loss.detach().double() / args.accum_steps" in fixed
