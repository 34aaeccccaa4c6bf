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


# -- issue 20: an int start plus reads of unknown dtype ----------------------------------------

_INT_START = """
    import torch

    def run(batches, loss_fn):
        losses = 0
        for x in batches:
            loss = loss_fn(x)
            losses += loss.item()
        print(losses / len(batches))
        return losses
"""


def test_int_start_sums_a_float32_loss_in_float64_over_many_steps() -> None:
    losses = _losses(3000)
    fixed = check(_INT_START, (losses, lambda x: x * 1.0), unsafe=True)
    assert "python_precision(loss.detach())" in fixed
    # The rewrite issue 20 found wrong (the loss summed in its own float32) does differ
    # on these values, so the comparison above can tell the two apart.
    float32_sum = 0
    for loss in losses:
        float32_sum += loss.detach()
    python_sum = 0
    for loss in losses:
        python_sum += loss.item()
    assert float32_sum.item() != python_sum


def test_int_start_sums_integer_reads_as_ints() -> None:
    counts = [torch.tensor(n, dtype=torch.int32) for n in (3, 2**31 - 1, 5, 2**31 - 1)]
    fixed = check(_INT_START, (counts, lambda x: x + 0), unsafe=True)
    assert "python_precision" in fixed  # int32 would wrap around past 2**31


def test_int_start_with_boolean_and_half_reads() -> None:
    check(_INT_START, ([torch.tensor(True), torch.tensor(False), torch.tensor(True)],
                       lambda x: x.clone()), unsafe=True)
    halves = [torch.tensor(v, dtype=torch.float16) for v in (0.1, 1000.0, 0.3, 2048.0, 1.0)]
    check(_INT_START, (halves * 50, lambda x: x.clone()), unsafe=True)


# -- reads under a division -------------------------------------------------------------------

_ONE_OVER_AND_OVER_A_SIZE = """
    import torch

    def run(losses):
        inverse = 0.0
        per_item = 0.0
        per_pair = 0.0
        for loss in losses:
            x = torch.ones(3)
            t = loss * x.sum()
            inverse += 1 / t.item()
            per_item += t.item() / len(x)
            per_pair += t.item() / 2
        print(inverse.hex(), per_item.hex(), per_pair.hex())
        return inverse, per_item, per_pair
"""


def test_one_over_a_read_and_a_read_over_a_size_are_exact_on_the_cpu() -> None:
    fixed = check(_ONE_OVER_AND_OVER_A_SIZE, (_losses(2000),), unsafe=True)
    assert "1 / t.detach().double()" in fixed and "t.detach().double() / len(x)" in fixed
    assert "t.detach().double() / 2" in fixed


def test_a_read_over_a_host_number_is_unsafe_unless_a_power_of_two() -> None:
    # CUDA divides by a CPU scalar as `t * (1 / c)`: that product is not Python's `x / c`
    # for many values when `1 / c` is inexact (c = 3), and always is for c = 2 or 4.
    fixed = check(_ONE_OVER_AND_OVER_A_SIZE, (_losses(2000),))
    assert "1 / t.detach().double()" in fixed and "t.detach().double() / 2" in fixed
    assert "t.item() / len(x)" in fixed  # left for --unsafe-fixes
    values = [t.double().item() for t in _losses(2000)]
    assert any(v * (1 / 3) != v / 3 for v in values)
    assert all(v * (1 / 4) == v / 4 and v * (1 / 2) == v / 2 for v in values)


def test_a_number_divided_by_a_read_is_not_rewritten() -> None:
    # torch's `3 / t` is `t.reciprocal() * 3`: it differs from Python's `3 / x` in the last
    # bit for many values, so the rule must leave this sum alone.
    source = """
        import torch

        def run(losses):
            total = 0.0
            for loss in losses:
                t = loss * torch.ones(()).sum()
                total += 3 / t.item()
            return total
    """
    check(source, (_losses(10),), unsafe=True, fixed=False)
    values = [t.double() for t in _losses(2000)]
    assert any((3 / v).item() != 3 / v.item() for v in values)


# -- e: a count kept under a device condition -------------------------------------------------

def test_count_under_a_device_condition() -> None:
    fixed = check("""
        import torch

        def run(norms, max_norm):
            clipped = 0
            nans = 0.0
            weighted = 0
            for value in norms:
                norm = torch.as_tensor(value) * 1.0
                if norm > max_norm:
                    clipped += 1
                if torch.isnan(norm):
                    nans += 1
                if norm > 2 * max_norm:
                    weighted += 3
            print(clipped, nans, weighted)
            return clipped, nans, weighted
    """, ([0.5, 1.5, float("nan"), 3.0, 0.9, 2.5] * 40, 1.0), unsafe=True)
    assert "clipped += (norm > max_norm).long()" in fixed
    assert "nans += torch.isnan(norm).double()" in fixed


def test_count_under_a_device_condition_that_never_holds() -> None:
    check("""
        import torch

        def run(norms):
            clipped = 0
            for value in norms:
                norm = torch.as_tensor(value) * 1.0
                if norm > 10:
                    clipped += 1
            return clipped
    """, ([0.5, 1.5] * 5,), unsafe=True)


# -- a loss handed to a backward pass is a tensor, beside numpy ---------------------------------

_BACKWARD_HANDED = """
    import numpy as np
    import torch

    def run(batches, model, accelerator, scaler):
        accumulated = []
        for batch in batches:
            total_loss = 0.0
            for micro in batch:
                loss = model(micro).square().mean()
                total_loss += loss.item()
                accelerator.backward(loss)
            accumulated.append(total_loss)
        scaled = 0.0
        for micro in batches[0]:
            loss = model(micro).abs().mean()
            scaler.scale(loss).backward()
            scaled += loss.item()
        print(f"{total_loss:.17g} {scaled:.17g}")
        return np.mean(accumulated), accumulated, scaled
"""


def test_a_loss_handed_to_backward_is_summed_on_the_device() -> None:
    class Accelerator:  # what Accelerate's (and Fabric's) backward does without a scaler
        def backward(self, loss):  # type: ignore[no-untyped-def]
            loss.backward()

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    batches = [[torch.randn(8, 4) for _ in range(3)] for _ in range(4)]
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    fixed = check(_BACKWARD_HANDED, (batches, model, Accelerator(), scaler))
    assert fixed.count(".detach().double()") == 2, fixed
