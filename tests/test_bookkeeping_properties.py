"""Original and fixed bookkeeping loops compute the same Python objects.

Each template is a small function with a loop. The fixer rewrites it (one rule, unsafe
fixes and all paths on); hypothesis then draws step counts (zero included), values and
dtypes, runs both versions on the same data and checks that the results are equal in
value and in type, recursively: a float stays a float, an int an int, a bool a bool, a
list a list, a numpy array an array of the same dtype and shape, a tensor a tensor.

Floating sums may differ in the last digits (the device sums in float32 where Python
sums in float64, as the rule pages say); every other result must be exact.
"""

from __future__ import annotations

import functools
import math
import textwrap

import pytest

from nosync_fix import fix_code

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from nosync_fix.runtime import to_host  # noqa: E402

try:  # numpy is optional: the templates that build arrays need it
    import numpy as np
except ImportError:  # pragma: no cover
    np = None
needs_numpy = pytest.mark.skipif(np is None, reason="numpy is not installed")

FLOATS = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, width=16)
FLOAT_DTYPES = st.sampled_from(["float16", "bfloat16", "float32", "float64"])
INT_DTYPES = st.sampled_from(["int8", "uint8", "int16", "int32", "int64"])
STEPS = st.integers(min_value=0, max_value=12)


@functools.cache
def _fixed(source: str, code: str, applicability: str | frozenset[str] = "safe",
           left: int = 0) -> tuple[dict, dict]:
    """The namespaces of the original and of the fixed template; the fix must apply (to
    all but ``left`` of the rule's findings)."""
    source = textwrap.dedent(source)
    result = fix_code(source, select=[code], unsafe_fixes=True, all_paths=True)
    assert result.error is None, result.error
    assert result.fixed != source, f"the fixer left the template unchanged:\n{source}"
    kinds = {f.fix.applicability.value for f in result.applied if f.fix is not None}
    expected = {applicability} if isinstance(applicability, str) else applicability
    assert kinds == expected, (kinds, result.fixed)
    unfixed = [f"{f.line}: {f.message}" for f in result.findings if f.code == code]
    assert len(unfixed) == left, f"findings left unfixed in the template: {unfixed}"
    before: dict = {}
    after: dict = {}
    exec(compile(source, "<original>", "exec"), before)
    exec(compile(result.fixed, "<fixed>", "exec"), after)
    return before, after


def assert_same(before, after, tolerance: float = 0.0, where: str = "result",
                scale: float = 1.0) -> None:
    """Equal in value and type, recursively; floats within ``tolerance``, relative to the
    larger of the value and ``scale`` (the size of the terms summed)."""
    assert type(after) is type(before), f"{where}: {type(before).__name__} became " \
                                        f"{type(after).__name__} ({before!r} vs {after!r})"
    if isinstance(before, float):
        if math.isnan(before):
            assert math.isnan(after), f"{where}: {before} != {after}"
        elif tolerance:
            assert math.isclose(after, before, rel_tol=tolerance,
                                abs_tol=tolerance * scale), f"{where}: {before} != {after}"
        else:
            assert after == before and math.copysign(1, after) == math.copysign(1, before), (
                f"{where}: {before!r} != {after!r}")
    elif isinstance(before, (list, tuple)):
        assert len(after) == len(before), f"{where}: {len(before)} != {len(after)} elements"
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            assert_same(b, a, tolerance, f"{where}[{i}]", scale)
    elif isinstance(before, dict):
        assert after.keys() == before.keys(), f"{where}: keys differ"
        for key in before:
            assert_same(before[key], after[key], tolerance, f"{where}[{key!r}]", scale)
    elif np is not None and isinstance(before, np.ndarray):
        assert (after.dtype, after.shape) == (before.dtype, before.shape), where
        assert np.array_equal(after, before, equal_nan=True), where
    elif isinstance(before, torch.Tensor):
        assert (after.dtype, after.shape, after.device, after.requires_grad) == (
            before.dtype, before.shape, before.device, before.requires_grad), where
        torch.testing.assert_close(after, before, rtol=tolerance, atol=tolerance * scale,
                                   equal_nan=True, msg=where)
    else:
        assert after == before, f"{where}: {before!r} != {after!r}"


def _dtype(name: str):  # type: ignore[no-untyped-def]
    return getattr(torch, name)


# -- NSY201 accumulate-on-device -------------------------------------------------------------

SUM_FLOAT = NSY201_FLOAT = """
import torch

def run(values, dtype):
    total = 0.0
    for v in values:
        loss = torch.tensor(v, dtype=dtype)
        total += loss.item()
    return total
"""


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), max_size=40),
       dtype=FLOAT_DTYPES)
def test_nsy201_float_sum(values, dtype) -> None:
    before, after = _fixed(SUM_FLOAT, "NSY201")
    dtype = _dtype(dtype)
    expected = before["run"](values, dtype)
    got = after["run"](values, dtype)
    assert type(got) is float
    # Summed in float64 on the device, in the same order: the same bits as Python's sum
    # (float16 and bfloat16 overflow to inf exactly as .item() does).
    assert got == expected or (math.isnan(got) and math.isnan(expected))


COUNT = """
import torch

def run(preds, targets):
    correct = 0
    wrong = 0
    seen = 0.0
    for p, t in zip(preds, targets):
        pred = torch.tensor(p)
        target = torch.tensor(t)
        correct += (pred == target).sum().item()
        wrong -= (pred != target).any().item()
        seen += (pred >= 0).sum().item()
    return correct, wrong, seen
"""


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.lists(st.tuples(st.integers(-2, 2), st.integers(-2, 2)),
                              min_size=1, max_size=5), max_size=10))
def test_nsy201_counts(rows) -> None:
    before, after = _fixed(COUNT, "NSY201")
    preds = [[p for p, _ in row] for row in rows]
    targets = [[t for _, t in row] for row in rows]
    assert_same(before["run"](preds, targets), after["run"](preds, targets))


INT_START = """
import torch

def run(values, dtype, counts):
    mean_sum = 0
    halves = 0
    truncated = 0
    small = 0
    for v, c in zip(values, counts):
        x = torch.tensor(v, dtype=torch.float32)
        n = torch.tensor(c, dtype=dtype)
        mean_sum += x.mean().item()
        halves += int(n.sum()) / 2
        truncated -= int(x.mean())
        small += int(n)
    return mean_sum, halves, truncated, small
"""


@settings(max_examples=60, deadline=None)
@given(data=st.lists(st.tuples(st.lists(FLOATS, min_size=1, max_size=3),
                               st.integers(0, 100)), max_size=10),
       dtype=INT_DTYPES)
def test_nsy201_int_start(data, dtype) -> None:
    before, after = _fixed(INT_START, "NSY201")
    values = [v for v, _ in data]
    counts = [c for _, c in data]
    expected = before["run"](values, _dtype(dtype), counts)
    scale = sum(abs(x) for v in values for x in v) + 1
    assert_same(expected, after["run"](values, _dtype(dtype), counts), tolerance=1e-6,
                scale=scale * len(values))


PERIODIC = """
import torch

def run(values, every, log):
    running = 0.0
    tokens = 0.0
    for i, v in enumerate(values):
        loss = torch.tensor(v, dtype=torch.float32)
        mask = torch.tensor(v) > 0
        running += loss.item()
        tokens += int(mask.sum())
        if i % every == every - 1:
            log.append(("loss", running / every, tokens))
            running = 0.0
            tokens = 0
    return running, tokens
"""


@settings(max_examples=60, deadline=None)
@given(values=st.lists(FLOATS, max_size=12), every=st.integers(1, 4))
def test_nsy201_periodic_print_and_reset(values, every) -> None:
    before, after = _fixed(PERIODIC, "NSY201")
    log_before: list = []
    log_after: list = []
    expected = before["run"](values, every, log_before)
    got = after["run"](values, every, log_after)
    scale = (sum(abs(v) for v in values) + 1) * len(values)
    assert_same(expected, got, tolerance=1e-6, scale=scale)
    assert_same(log_before, log_after, tolerance=1e-6, where="log", scale=scale)


NESTED = """
import json
import torch

def run(epochs, log):
    history = []
    total = 0.0
    for epoch in epochs:
        epoch_loss = 0.0
        for v in epoch:
            loss = torch.tensor(v, dtype=torch.float32)
            epoch_loss += loss.item() * 2
            total += loss.item()
        history.append({"loss": epoch_loss, "n": len(epoch)})
    log.append(json.dumps({"total": total, "last": history[-1] if history else None}))
    return history, total
"""


@settings(max_examples=60, deadline=None)
@given(epochs=st.lists(st.lists(st.integers(-100, 100), max_size=5), max_size=4))
def test_nsy201_nested_loops_and_json(epochs) -> None:
    before, after = _fixed(NESTED, "NSY201")
    log_before: list = []
    log_after: list = []
    assert_same(before["run"](epochs, log_before), after["run"](epochs, log_after))
    assert log_before == log_after  # small integers: float32 sums are exact


TWO_LOOPS = """
import torch

def run(floats, counts):
    total = 0
    correct, seen = 0, 0
    for t in floats:
        t = torch.tensor(t, dtype=torch.float32)
        total += t.mean().item()
    for c in counts:
        c = torch.tensor(c, dtype=torch.int64)
        total += int(c.sum())
        correct += (c > 0).sum().item()
        seen += len(c)
    total /= 2
    return total, correct, seen
"""


@settings(max_examples=60, deadline=None)
@given(floats=st.lists(st.lists(st.integers(-50, 50), min_size=1, max_size=3), max_size=5),
       counts=st.lists(st.lists(st.integers(-50, 50), min_size=1, max_size=3), max_size=5))
def test_nsy201_two_loops_tuple_start_and_division_after(floats, counts) -> None:
    before, after = _fixed(TWO_LOOPS, "NSY201")
    scale = sum(abs(v) for row in floats + counts for v in row) + 1
    assert_same(before["run"](floats, counts), after["run"](floats, counts), tolerance=1e-6,
                scale=scale)


# -- NSY202 collect-on-device ----------------------------------------------------------------

COLLECT_ITEMS = """
import torch

def run(values, dtypes, shapes, prior):
    losses = list(prior)
    floats = []
    ints = []
    for v, dtype, shape in zip(values, dtypes, shapes):
        t = torch.tensor(v, dtype=dtype)
        t = t.reshape(shape)
        losses.append(t.item())
        floats.append(float(t))
        ints.append(int(t))
    return losses, floats, ints
"""


@settings(max_examples=80, deadline=None)
@given(data=st.lists(st.tuples(FLOATS, st.sampled_from(
    ["float16", "bfloat16", "float32", "float64", "int64", "int32", "bool"]),
    st.sampled_from([(), (1,), (1, 1)])), max_size=10),
    prior=st.lists(st.one_of(FLOATS, st.integers(-5, 5)), max_size=3),
    uniform=st.booleans())
def test_nsy202_items(data, prior, uniform) -> None:
    before, after = _fixed(COLLECT_ITEMS, "NSY202")
    if uniform:
        data = [(v, data[0][1], s) for v, _, s in data]
    values = [v for v, _, _ in data]
    dtypes = [_dtype(d) for _, d, _ in data]
    shapes = [s for _, _, s in data]
    assert_same(before["run"](values, dtypes, shapes, prior),
                after["run"](values, dtypes, shapes, prior))


# DEVICE stands for an accelerator: the analysis cannot prove the tensors are on the
# host (`torch.tensor(v)` without a device is, and reading it is no sync to remove).
COLLECT_BATCHES = """
import torch

DEVICE = torch.device("cpu")

def run(batches, dtype):
    labels = []
    rows = []
    tensors = []
    for batch in batches:
        b = torch.tensor(batch, dtype=dtype, device=DEVICE)
        labels.extend(b.tolist())
        rows.append(b.tolist())
        tensors.append(b.detach().cpu())
    return labels, rows, tensors
"""

# `.cpu()` / `.numpy()` copies of 0-dim tensors (reductions): the only whole-tensor
# copies NSY202 still collects on the device (others could fill device memory).
COLLECT_SCALAR_COPIES = """
import torch

DEVICE = torch.device("cpu")

def run(batches, dtype):
    sums = []
    arrays = []
    for batch in batches:
        b = torch.tensor(batch, dtype=dtype, device=DEVICE)
        sums.append(b.sum().cpu())
        arrays.append(b.amax().cpu().numpy())
    return sums, arrays
"""

BATCH_SHAPES = dict(
    lengths=st.lists(st.integers(0, 4), max_size=6), width=st.integers(0, 3),
    ragged=st.booleans(), scalar=st.booleans(),
    dtype=st.sampled_from(["float32", "int64", "bool", "float16"]))


def _make_batches(lengths, width, ragged, scalar):  # type: ignore[no-untyped-def]
    if scalar:
        return [float(n) for n in lengths]  # 0-dim tensors
    if width:
        batches = [[[float(i + j) for j in range(width + (k % 2 if ragged else 0))]
                    for i in range(n)] for k, n in enumerate(lengths)]
        return [b for b in batches if b]  # torch.tensor([]) has shape (0,), not (0, w)
    return [[float(i) for i in range(n)] for n in lengths]


@settings(max_examples=80, deadline=None)
@given(**BATCH_SHAPES)
def test_nsy202_batches(lengths, width, ragged, scalar, dtype) -> None:
    source = COLLECT_BATCHES
    if scalar:  # `.extend()` of a 0-dim tensor's `.tolist()` fails in the original
        source = source.replace("        labels.extend(b.tolist())\n", "")
    # `tensors.append(b.detach().cpu())` of whole batches is reported, not fixed: kept on
    # the device they would fill its memory until the loop ends.
    before, after = _fixed(source, "NSY202", "safe", left=1)
    batches = _make_batches(lengths, width, ragged, scalar)
    dtype = _dtype(dtype)
    assert_same(before["run"](batches, dtype), after["run"](batches, dtype))
    # The runtime's whole-tensor conversion stays public and exact for users who call it.
    tensors = [torch.tensor(b, dtype=dtype) for b in batches]
    assert_same([t.detach().cpu() for t in tensors], to_host(list(tensors), "cpu"))


@needs_numpy
@settings(max_examples=60, deadline=None)
@given(**BATCH_SHAPES)
def test_nsy202_numpy_arrays(lengths, width, ragged, scalar, dtype) -> None:
    batches = _make_batches(lengths, width, ragged, scalar)
    dtype = _dtype(dtype)
    tensors = [torch.tensor(b, dtype=dtype) for b in batches]
    assert_same([t.cpu().numpy() for t in tensors], to_host(list(tensors), "numpy"))


@needs_numpy
@settings(max_examples=60, deadline=None)
@given(**BATCH_SHAPES)
def test_nsy202_scalar_copies(lengths, width, ragged, scalar, dtype) -> None:
    before, after = _fixed(COLLECT_SCALAR_COPIES, "NSY202", "unsafe")
    batches = [b for b in _make_batches(lengths, width, ragged, scalar) if b != []]
    dtype = _dtype(dtype)
    assert_same(before["run"](batches, dtype), after["run"](batches, dtype))


COLLECT_MIXED = """
import torch

def run(values, skips):
    losses = []
    preds = []
    for v, skip in zip(values, skips):
        if skip:
            losses.append(0.0)
            preds.extend([-1, -1])
            continue
        t = torch.tensor(v, dtype=torch.float32)
        losses.append(t.item())
        preds.extend((t > 0).long().reshape(1).tolist())
    return losses, preds
"""


@settings(max_examples=60, deadline=None)
@given(data=st.lists(st.tuples(FLOATS, st.booleans()), max_size=10))
def test_nsy202_host_values_in_the_same_loop(data) -> None:
    before, after = _fixed(COLLECT_MIXED, "NSY202")
    values = [v for v, _ in data]
    skips = [s for _, s in data]
    assert_same(before["run"](values, skips), after["run"](values, skips))


COLLECT_NESTED = """
import torch

DEVICE = torch.device("cpu")

def run(epochs):
    all_losses = []
    per_epoch = []
    for epoch in epochs:
        preds = []
        for v in epoch:
            t = torch.tensor(v, dtype=torch.float32, device=DEVICE)
            all_losses.append(t.item())
            preds.extend(t.reshape(1).tolist())
        per_epoch.append(preds)
        all_losses.append(len(all_losses))
    return all_losses, per_epoch
"""


@settings(max_examples=60, deadline=None)
@given(epochs=st.lists(st.lists(FLOATS, max_size=4), max_size=4))
def test_nsy202_nested_loops(epochs) -> None:
    before, after = _fixed(COLLECT_NESTED, "NSY202")
    assert_same(before["run"](epochs), after["run"](epochs))


def test_assert_same_tells_types_apart() -> None:
    with pytest.raises(AssertionError):
        assert_same(1.0, 1)
    with pytest.raises(AssertionError):
        assert_same([True], [1])
    with pytest.raises(AssertionError):
        assert_same(torch.zeros(2), torch.zeros(2, dtype=torch.float64))
    with pytest.raises(AssertionError):
        assert_same(0.0, -0.0)
    assert_same([1.0, {"a": (2, torch.ones(1))}], [1.0, {"a": (2, torch.ones(1))}])


# -- NSY203 running-extreme-on-device --------------------------------------------------------

EXTREMES = """
import math
import torch

def run(values, dtype):
    low = float("inf")
    high = -math.inf
    first_low = float("inf")
    first_high = 0.0
    if_low = float("inf")
    if_high = -float("inf")
    for v in values:
        t = torch.tensor(v, dtype=dtype)
        t = t.float()
        low = min(low, t.item())
        high = max(high, t.item())
        first_low = min(t.item(), first_low)
        first_high = max(t.item(), first_high)
        if t < if_low:
            if_low = t.item()
        if if_high <= float(t):
            if_high = float(t)
    return low, high, first_low, first_high, if_low, if_high
"""

SPECIAL = st.sampled_from([float("nan"), 0.0, -0.0, float("inf"), -float("inf"), 1.5, -1.5])


@settings(max_examples=120, deadline=None)
@given(values=st.lists(st.one_of(FLOATS, SPECIAL), max_size=10), dtype=FLOAT_DTYPES)
def test_nsy203_extremes_follow_python_exactly(values, dtype) -> None:
    before, after = _fixed(EXTREMES, "NSY203")
    dtype = _dtype(dtype)
    assert_same(before["run"](values, dtype), after["run"](values, dtype))


INT_EXTREMES = """
import torch

def run(rows):
    top = 0
    bottom = 0
    for row in rows:
        pred = torch.argmax(torch.tensor(row, dtype=torch.float32))
        top = max(top, pred.item())
        if int(pred) < bottom:
            bottom = int(pred)
    return top, bottom
"""


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.lists(FLOATS, min_size=1, max_size=5), max_size=8))
def test_nsy203_integer_extremes(rows) -> None:
    before, after = _fixed(INT_EXTREMES, "NSY203")
    assert_same(before["run"](rows), after["run"](rows))


# -- NSY204 stop-gradient-read ---------------------------------------------------------------

NORMALIZE = """
import torch

def run(batches, dtype):
    out = []
    for batch in batches:
        x = torch.tensor(batch, dtype=dtype, requires_grad=True)
        y = x - x.mean().item()
        y = y / y.abs().max().item()
        z = y * y.std().item()
        z.sum().backward()
        out.append((z.detach(), x.grad))
    return out
"""


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(st.lists(FLOATS, min_size=2, max_size=6), max_size=4),
       dtype=st.sampled_from(["float16", "bfloat16", "float32", "float64"]))
def test_nsy204_same_tensor_is_exact_values_and_gradients(batches, dtype) -> None:
    before, after = _fixed(NORMALIZE, "NSY204")
    dtype = _dtype(dtype)
    assert_same(before["run"](batches, dtype), after["run"](batches, dtype))


COLLECT_TUPLE_MADE = """
import torch

DEVICE = torch.device("cpu")

def run(values, prior):
    preds, labels, kept = [], [], list(prior)
    for v in values:
        t = torch.tensor(v, dtype=torch.float32, device=DEVICE)
        preds.append(t.item())
        labels.extend(t.reshape(1).tolist())
        kept.append(float(t))
    return preds, labels, kept
"""


@settings(max_examples=60, deadline=None)
@given(values=st.lists(FLOATS, max_size=8), prior=st.lists(FLOATS, max_size=2))
def test_nsy202_lists_made_by_one_tuple_assignment(values, prior) -> None:
    before, after = _fixed(COLLECT_TUPLE_MADE, "NSY202")
    assert_same(before["run"](values, prior), after["run"](values, prior))
