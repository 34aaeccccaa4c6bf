"""NSY202's fixes, now written as `to_host(list, how)`, run the same before and after.

Each program is fixed (NSY202 only), then the original and the fixed program run on the
same data under the host-read counter: results must be identical (floats to the last
bit, types included) and the fixed program must read the device fewer times.
"""

from __future__ import annotations

import textwrap

import pytest

from nosync_fix import fix_code

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
from compile_support import assert_identical as _same  # noqa: E402

from nosync_fix.runtime import to_host  # noqa: E402
from nosync_fix.verify.syncs import count_syncs  # noqa: E402


def _run(source: str, *args):  # type: ignore[no-untyped-def]
    namespace: dict = {}
    exec(compile(source, "<program>", "exec"), namespace)
    with count_syncs("<program>", "cpu") as reads:
        result = namespace["run"](*args)
    return result, reads.total


def check(source: str, *args, unsafe: bool = False,  # type: ignore[no-untyped-def]
          fewer: bool = True) -> str:
    source = textwrap.dedent(source)
    result = fix_code(source, select=["NSY202"], unsafe_fixes=unsafe, all_paths=True)
    assert result.error is None, result.error
    assert "to_host(" in result.fixed, result.fixed
    assert "torch.cat" not in result.fixed  # the guards live in the runtime now
    before, reads_before = _run(source, *args)
    after, reads_after = _run(result.fixed, *args)
    _same(before, after)
    if fewer:
        assert reads_after < reads_before, (reads_before, reads_after, result.fixed)
    else:
        assert reads_after == reads_before == 0
    return result.fixed


SCALARS = """
    import torch

    def run(batches, prior):
        losses = list(prior)
        floats, counts, flags = [], [], []
        for batch in batches:
            x = torch.as_tensor(batch)
            loss = (x * 1.5).sum()
            losses.append(loss.item())
            floats.append(float(x.max()))
            counts.append(int(x.sum()))
            flags.append((x > 0).any().item())
        return losses, floats, counts, flags
"""


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64,
                                   torch.int32])
def test_scalar_forms(dtype) -> None:  # type: ignore[no-untyped-def]
    generator = torch.Generator().manual_seed(1)
    batches = [(torch.rand(4, generator=generator) * 9 - 3).to(dtype) for _ in range(25)]
    fixed = check(SCALARS, batches, [0.5, 2])
    assert 'losses[losses_start:] = to_host(losses[losses_start:], "item")' in fixed
    assert 'floats = to_host(floats, "float")' in fixed
    assert 'counts = to_host(counts, "int")' in fixed


def test_scalar_forms_with_mixed_dtypes() -> None:
    batches = [torch.tensor([1.25, 2.0]), torch.tensor([3, 4]), torch.tensor([0.1, 0.2],
               dtype=torch.float64)] * 3
    check(SCALARS, batches, [])


def test_zero_steps() -> None:
    check(SCALARS, [], [7], fewer=False)


LISTS = """
    import torch

    def run(batches):
        rows, labels, mixed = [], [], []
        for batch in batches:
            pred = torch.as_tensor(batch).argmax(-1)
            rows.append(pred.tolist())
            labels.extend(pred.tolist())
            mixed += pred.tolist()
            mixed.append(-1)
        return rows, labels, mixed
"""


def test_list_forms_with_a_smaller_last_batch() -> None:
    generator = torch.Generator().manual_seed(2)
    batches = [torch.rand(8, 5, generator=generator) for _ in range(6)]
    batches.append(torch.rand(3, 5, generator=generator))
    fixed = check(LISTS, batches)
    assert 'labels = to_host(labels, "extend")' in fixed
    assert 'mixed = to_host(mixed, "extend")' in fixed


ARRAYS = """
    import torch

    def run(batches):
        arrays, copies = [], []
        for batch in batches:
            out = torch.as_tensor(batch) * 2
            arrays.append(out.cpu().numpy())
            copies.append(out.detach().cpu())
        return arrays, copies
"""


def test_whole_tensor_forms_are_reported_not_collected() -> None:
    """Regression (timm's inference loop, a diffusers video pipeline): `.cpu()` and
    `.numpy()` copies of whole outputs kept on the device until the loop ends hold the
    whole loop's outputs in device memory; the original freed each step's device copy."""
    result = fix_code(textwrap.dedent(ARRAYS), select=["NSY202"], unsafe_fixes=True,
                      all_paths=True)
    assert result.fixed == textwrap.dedent(ARRAYS)
    messages = [f.message for f in result.findings]
    assert len(messages) == 2 and all(
        "device memory until the loop ends" in m and "non_blocking=True" in m
        and "collect the tensors" not in m for m in messages), messages


REDUCED = """
    import torch

    def run(batches):
        sums, peaks = [], []
        for batch in batches:
            out = torch.as_tensor(batch) * 2
            sums.append(out.sum().cpu())
            peaks.append(out.amax().detach().cpu().numpy())
        return sums, peaks
"""


def test_reduced_tensor_forms() -> None:
    generator = torch.Generator().manual_seed(3)
    batches = [torch.rand(4, 3, generator=generator) for _ in range(5)]
    batches.append(torch.rand(1, 3, generator=generator))
    fixed = check(REDUCED, batches, unsafe=True)
    assert 'sums = to_host(sums, "cpu")' in fixed and 'peaks = to_host(peaks, "numpy")' in fixed


GENERATE = """
    import torch

    def run(logits, stop):
        tokens = []
        token = logits[0].argmax()
        tokens.append(token.item())
        for row in logits[1:]:
            if token.item() in stop:
                break
            token = (row * 2).argmax()
            tokens.append(token.item())
        return tokens
"""


def test_value_read_again_by_the_loop_is_left_alone() -> None:
    """Regression (torchtune's generate loops): the next pass reads the same token in the
    stop test, so the host waits for it every iteration anyway; a device copy per token
    and one transfer after the loop would only add work."""
    source = textwrap.dedent(GENERATE)
    result = fix_code(source, select=["NSY202"], unsafe_fixes=True, all_paths=True)
    assert result.fixed == source
    (finding,) = result.findings
    assert "`token` is read on the host again in this loop (line 9" in finding.message
    assert finding.fix is None
    # Without the stop test the same collection is fixed, and runs the same.
    check(GENERATE.replace("            if token.item() in stop:\n                break\n", ""),
          torch.rand(6, 5, generator=torch.Generator().manual_seed(4)), (), unsafe=True)


def test_to_host_keeps_host_values_and_subclasses_one_by_one() -> None:
    class Sub(torch.Tensor):
        pass

    sub = torch.tensor(2.5).as_subclass(Sub)
    values = [torch.tensor(1.0), 3, sub, "x"]
    assert to_host(values, "item") == [1.0, 3, 2.5, "x"]
    assert to_host([torch.tensor([1, 2]), 9, [4]], "extend") == [1, 2, 9, [4]]
    assert to_host([torch.tensor(True), torch.tensor(False)], "int") == [1, 0]
    assert type(to_host([torch.tensor(True)], "int")[0]) is int
    assert to_host([], "numpy") == []
    with pytest.raises(ValueError):
        to_host([torch.tensor(1.0)], "items")


HOST_FUNCTIONS = """
    import math

    import torch

    def run(batches):
        ppl, psnr = [], []
        for batch in batches:
            x = torch.as_tensor(batch)
            ppl.append(math.exp(x.mean().item()))
            psnr.append(10 * math.log10(1 / float(x.max())))
        return ppl, psnr
"""


def test_math_function_of_a_read_is_applied_after_the_loop() -> None:
    generator = torch.Generator().manual_seed(4)
    batches = [torch.rand(6, generator=generator) * 5 + 0.01 for _ in range(300)]
    fixed = check(HOST_FUNCTIONS, batches, unsafe=True)
    assert 'ppl = [math.exp(x) for x in to_host(ppl, "item")]' in fixed
    assert 'psnr = [10 * math.log10(1 / x) for x in to_host(psnr, "float")]' in fixed
    safe = fix_code(textwrap.dedent(HOST_FUNCTIONS), select=["NSY202"], all_paths=True)
    assert safe.fixed == safe.original  # unsafe: an error would come after the loop
