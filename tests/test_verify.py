"""Tests of nosync-verify: counting syncs and breaks, catching wrong rewrites, the CLI."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

#: Compiles with torch.compile / torch._dynamo: `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

from nosync_fix.verify import assert_verified, verify  # noqa: E402
from nosync_fix.verify.breaks import compile_and_observe  # noqa: E402
from nosync_fix.verify.cli import main  # noqa: E402
from nosync_fix.verify.compare import EXACT, FLOAT32, compare_text, tolerance_for  # noqa: E402
from nosync_fix.verify.coverage import changes, instrument  # noqa: E402
from nosync_fix.verify.loading import VerifyUsageError  # noqa: E402
from nosync_fix.verify.render import render  # noqa: E402
from nosync_fix.verify.syncs import count_syncs  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src"

# -- the program whose rewrites are verified ---------------------------------------------------

ORIGINAL = '''
import torch

LIMIT = 1.0


def step(x, w):
    y = x @ w
    if y.abs().max().item() > LIMIT:
        y = y / y.abs().max()
    total = 0.0
    for row in y:
        total += row.sum().item()
    print(f"total {total:.4f}")
    return y, total


def example_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    scale = 0.05 if seed % 2 else 2.0  # odd seeds stay under LIMIT, even seeds go over
    return torch.randn(4, 3, generator=g) * scale, torch.randn(3, 3, generator=g)
'''

#: The right rewrite: the branch becomes a where, the sum stays on the device, in float64
#: as Python's was (what NSY201 writes: the verifier compares exactly).
CORRECT = ORIGINAL.replace(
    "    if y.abs().max().item() > LIMIT:\n        y = y / y.abs().max()\n",
    "    y = torch.where(y.abs().max() > LIMIT, y / y.abs().max(), y)\n",
).replace(
    "        total += row.sum().item()\n",
    "        total += row.sum().detach().double()\n    total = float(total)\n",
)
assert CORRECT.count("torch.where") == 1 and CORRECT.count("float(total)") == 1

WRONG = {
    "wrong constant": CORRECT.replace("y.abs().max() > LIMIT", "y.abs().max() > 0.01"),
    "dropped branch": CORRECT.replace(
        "    y = torch.where(y.abs().max() > LIMIT, y / y.abs().max(), y)\n", ""),
    "changed dtype": CORRECT.replace("y = x @ w", "y = (x @ w).double()"),
    "tensor where a float was": CORRECT.replace("    total = float(total)\n", ""),
    "different printed text": CORRECT.replace("{total:.4f}", "{total:.3f}"),
    "shifted random stream": CORRECT.replace("    y = x @ w\n",
                                             "    y = x @ w\n    torch.rand(1)\n"),
    "raises": CORRECT.replace("    total = float(total)\n",
                              "    total = float(total)\n    assert total > 1e9\n"),
}


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def original(tmp_path: Path) -> Path:
    return write(tmp_path, "original.py", ORIGINAL)


def quick(file: Path, **options):
    options.setdefault("trials", 4)
    options.setdefault("measure_time", False)
    options.setdefault("measure_breaks", False)
    options.setdefault("device", "cpu")
    options.setdefault("backend", "eager")
    return verify(file, "step", **options)


# -- counting syncs ----------------------------------------------------------------------------


def _count(fn) -> tuple[int, dict[str, int]]:
    with count_syncs(__file__, "cpu") as count:
        try:
            fn()
        except RuntimeError:  # numpy() without numpy installed still asked for the values
            pass
    return count.total, dict(count.by_kind)


t = torch.arange(6.0).reshape(2, 3)
s = t.sum()
mask = t > 2


@pytest.mark.parametrize("read, kind", [
    (lambda: s.item(), "item"),
    (lambda: t.tolist(), "tolist"),
    (lambda: t.numpy(), "numpy"),
    (lambda: bool(s > 0), "bool"),
    (lambda: 1 if s > 0 else 0, "bool"),
    (lambda: float(s), "float"),
    (lambda: int(s), "int"),
    (lambda: [1, 2, 3][torch.tensor(1)], "index"),
    (lambda: f"{s:.3f}", "format"),
    (lambda: "{}".format(s), "format"),  # noqa: UP032 (str.format is the case tested)
    (lambda: repr(t), "repr"),
    (lambda: math.exp(s), "float"),
    (lambda: t.nonzero(), "nonzero"),
    (lambda: torch.nonzero(t), "nonzero"),
    (lambda: torch.where(mask), "nonzero"),
    (lambda: t.masked_select(mask), "masked_select"),
    (lambda: torch.unique(t), "unique"),
    (lambda: t.unique(), "unique"),
    (lambda: torch.equal(t, t), "equal"),
    (lambda: t[mask], "boolean mask"),
    (lambda: t.cpu(), "to host"),  # a device-to-host copy on an accelerator
    (lambda: t.to("cpu"), "to host"),
])
def test_each_host_read_counts_once(read, kind):
    total, by_kind = _count(read)
    assert (total, by_kind) == (1, {kind: 1})


def test_a_sync_free_function_counts_zero():
    def sync_free():
        y = torch.where(t > 2, t * 2, t - 1)
        z = (y.sum() + t.mean()).detach()
        n = t.shape[0] + len(t) + t.numel() + t.dim()
        w = torch.zeros(n).masked_fill(torch.zeros(n, dtype=torch.bool), 1.0)
        return z * w.sum(), t.float(), t.to(torch.float64)

    # (t.cpu() and t.to("cpu") are counted: issue 17 wants copies to the host counted on
    # every device, and on an accelerator they block.)
    assert _count(sync_free) == (0, {})


CPU = torch.device("cpu")


def test_a_copy_to_the_run_s_device_is_no_sync_on_a_cpu():
    # On a CPU run `x.to(device)` with `device` the CPU is a no-op, and on an accelerator
    # the same line copies to the device: never a sync. Only a call that names the CPU
    # is a device-to-host copy wherever the code runs.
    device, name = CPU, "cpu"
    assert _count(lambda: t.to(device)) == (0, {})
    assert _count(lambda: t.to(t.device)) == (0, {})
    assert _count(lambda: t.to(name)) == (0, {})
    assert _count(lambda: t.to(device, torch.float64)) == (0, {})
    assert _count(lambda: t.to(device=CPU)) == (1, {"to host": 1})  # "CPU" names it
    assert _count(lambda: t.to(torch.device("cpu"))) == (1, {"to host": 1})
    assert _count(lambda: t.to(
        device="cpu")) == (1, {"to host": 1})  # a call over two lines


def test_clip_grad_norm_copies_to_the_gradients_device_are_no_syncs():
    # torch.nn.utils.clip_grad_norm_ moves each norm `.to(device)`, the gradients' device.
    parameter = torch.nn.Parameter(torch.ones(3))
    parameter.sum().backward()
    for norm_type in (2.0, float("inf")):
        assert _count(lambda n=norm_type: torch.nn.utils.clip_grad_norm_(
            [parameter], 1.0, norm_type=n)) == (0, {})


def test_optimizer_step_counters_are_not_syncs():
    # Adam keeps `step` in a CPU tensor on every device and reads it with .item().
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.ones(1, 3)).sum().backward()
    with count_syncs(__file__, "cpu") as count:
        optimizer.step()
        optimizer.step()
    assert count.total == 0


def test_reads_are_attributed_to_lines_of_the_measured_file():
    here = sys._getframe().f_lineno
    with count_syncs(__file__, "cpu") as count:
        for _ in range(3):
            s.item()  # here + 3
    assert count.by_site == {(here + 3, "item"): 3}


def test_on_an_accelerator_reads_of_cpu_tensors_are_not_syncs():
    with count_syncs(__file__, "cuda:0" if torch.cuda.is_available() else "cuda") as count:
        s.item()
        t.tolist()
    assert count.total == 0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_device_to_host_copies_are_syncs_on_cuda():
    x = torch.ones(4, device="cuda")
    host = torch.zeros(4)
    with count_syncs(__file__, "cuda") as count:
        x.cpu()
        x.to("cpu")
        host[0] = x[0]
        x.to("cpu", non_blocking=True)  # not a sync
    assert count.by_kind["to host"] == 3
    assert count.cuda_sync_warnings >= 1


# -- counting graph breaks ---------------------------------------------------------------------

BREAKS = '''
import torch


def fused(x):
    return torch.where(x.sum() > 0, x * 2, x - 1)


def two_reads(x):
    y = x * 2
    if y.mean().item() > 0:
        y = y + 1
    return y.sum() + float(y.sum())


def in_a_loop(xs):
    total = 0.0
    for x in xs:
        total += (x * 2).sum().item()
    return total
'''


@pytest.fixture(scope="module")
def break_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("breaks") / "breaks.py"
    path.write_text(BREAKS)
    namespace: dict = {}
    exec(compile(BREAKS, str(path), "exec"), namespace)
    return str(path), namespace


def _observe(break_module, name, *args):
    filename, namespace = break_module
    torch._dynamo.reset()
    observed = compile_and_observe(namespace[name], args, {}, filename, "eager",
                                   clock=lambda: 0.0)
    torch._dynamo.reset()
    return observed.breaks


def test_a_function_without_reads_is_one_graph(break_module):
    breaks = _observe(break_module, "fused", torch.randn(4))
    assert (breaks.graph_count, breaks.graph_breaks, breaks.error) == (1, 0, None)


def test_each_read_splits_the_graph_with_its_line(break_module):
    breaks = _observe(break_module, "two_reads", torch.randn(4))
    assert (breaks.graph_count, breaks.graph_breaks) == (3, 2)
    assert [r.line for r in breaks.reasons] == [11, 13]
    assert all("item()" in r.reason for r in breaks.reasons)
    assert not any(r.frame_skipped for r in breaks.reasons)


def test_a_break_in_a_loop_is_counted_although_explain_misses_it(break_module):
    breaks = _observe(break_module, "in_a_loop", torch.randn(3, 4))
    assert breaks.graph_breaks == 1
    (reason,) = breaks.reasons
    assert reason.line == 19 and reason.frame_skipped
    explained = torch._dynamo.explain(break_module[1]["in_a_loop"])(torch.randn(3, 4))
    assert explained.graph_break_count <= 0  # what the log-based count is for


# -- verifying rewrites ------------------------------------------------------------------------


def test_the_correct_rewrite_passes_with_fewer_syncs(original, tmp_path):
    after = write(tmp_path, "after.py", CORRECT)
    report = quick(original, after=after, measure_breaks=True, backend="eager",
                   adversarial=False)  # (their branch counts are added below)
    assert report.passed, report.problems
    assert report.exit_code == 0
    assert report.before.syncs_per_call == 5 and report.after.syncs_per_call == 1
    assert report.after.graph_breaks <= report.before.graph_breaks
    assert 9 in [r.line for r in report.before.breaks.reasons]  # the `if` on .item()
    assert 9 not in [r.line for r in report.after.breaks.reasons]
    assert report.equivalence.max_abs_diff < 1e-5
    (condition,) = report.equivalence.branch_coverage
    assert (condition.line, condition.why) == (9, "rewritten")
    assert condition.true == 2 and condition.false == 2  # seeds 0 and 2 over, 1 and 3 under
    assert report.equivalence.warnings == []
    report = quick(original, after=after)  # the adversarial inputs agree too
    assert report.passed, report.problems
    # 6 kinds x 2 seeds (no list to empty), and LIMIT at the compared value and its neighbours
    assert report.equivalence.adversarial_trials == 15


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_rewrite_is_caught(original, tmp_path, name):
    after = write(tmp_path, "after.py", WRONG[name])
    report = quick(original, after=after)
    assert not report.equivalence.passed
    assert report.exit_code == 1
    assert report.equivalence.failures


def test_failures_say_what_differs(original, tmp_path):
    def failure(name: str) -> str:
        report = quick(original, after=write(tmp_path, f"{len(name)}.py", WRONG[name]))
        return " | ".join(f"{f.path}: {f.detail}" for f in report.equivalence.failures)

    assert "result[0]" in failure("dropped branch")
    assert "dtype" in failure("changed dtype")
    assert "result[1]: float" in failure("tensor where a float was")
    assert "Tensor" in failure("tensor where a float was")
    assert "printed" in failure("different printed text")
    assert "rng.torch" in failure("shifted random stream")
    assert "raised" in failure("raises")


def test_a_rewrite_that_fails_to_import_is_caught(original, tmp_path):
    after = write(tmp_path, "after.py", "import torch\nraise ImportError('broken')\n")
    report = quick(original, after=after)
    assert not report.passed
    assert "fails when imported" in report.equivalence.fatal


def test_a_rewrite_whose_inputs_fail_is_caught(original, tmp_path):
    after = write(tmp_path, "after.py", CORRECT.replace(
        "    g = torch.Generator()", "    assert seed < 2\n    g = torch.Generator()"))
    report = quick(original, after=after, measure_breaks=True)
    assert not report.passed
    assert report.equivalence.failed_trials == 2  # seeds 2 and 3
    assert "preparing the rewritten version" in report.equivalence.failures[0].path


def test_deferred_output_is_flushed_and_compared(original, tmp_path):
    """The real runtime: the printed line arrives at flush and counts as one sync."""
    deferred = CORRECT.replace(
        "import torch\n",
        "import torch\nfrom nosync_fix.runtime import deferred_print, fmt, item\n")
    deferred = deferred.replace(
        '        total += row.sum().detach().double()\n    total = float(total)\n'
        '    print(f"total {total:.4f}")\n',
        '        total += row.sum().detach().double()\n'
        '    deferred_print(fmt("total {:.4f}", item(total, float)))\n'
        '    total = float(total)\n')
    assert "deferred_print" in deferred
    report = quick(original, after=write(tmp_path, "deferred.py", deferred))
    assert report.passed, report.problems
    # the flush's batched read is counted once, with the rewrite's syncs
    assert report.after.syncs.by_kind["deferred flush"] == report.trials
    wrong = deferred.replace('"total {:.4f}"', '"total {:.2f}"')
    report = quick(original, after=write(tmp_path, "wrong.py", wrong))
    assert not report.passed and "printed" in report.equivalence.failures[0].path


def test_more_syncs_fail_even_when_the_numbers_agree(original, tmp_path):
    after = write(tmp_path, "after.py", ORIGINAL.replace(
        "    y = x @ w\n", "    y = x @ w\n    assert float(y.sum()) == float(y.sum())\n"))
    # (on a NaN input the assert fails: the adversarial inputs would catch that instead)
    report = quick(original, after=after, adversarial=False)
    assert report.equivalence.passed
    assert report.after.syncs_per_call == report.before.syncs_per_call + 2
    assert not report.passed and "more syncs" in report.problems[0]


def test_more_graph_breaks_fail(original, tmp_path):
    after = write(tmp_path, "after.py", ORIGINAL.replace(
        "    y = x @ w\n", "    y = x @ w\n    y = y * (1.0 if float(y.sum()) < 1e9 else 2.0)\n"))
    # (NaN, inf and huge inputs take the other side: the adversarial inputs would catch it)
    report = quick(original, after=after, measure_breaks=True, backend="eager", trials=2,
                   adversarial=False)
    assert report.equivalence.passed
    assert report.after.graph_breaks == report.before.graph_breaks + 1
    assert any("more graph breaks" in p for p in report.problems)


def test_printed_lines_in_another_order_are_caught(tmp_path):
    talk = "import torch\n\ndef step(x):\n    print('start')\n    print(x.sum())\n" \
           "\ndef example_inputs(seed):\n    return (torch.ones(seed + 1),)\n"
    swapped = talk.replace("    print('start')\n    print(x.sum())\n",
                           "    print(x.sum())\n    print('start')\n")
    report = quick(write(tmp_path, "talk.py", talk), after=write(tmp_path, "swap.py", swapped))
    assert not report.passed
    assert "different order" in report.equivalence.failures[0].detail


def test_the_same_exception_in_both_is_equivalent(tmp_path):
    source = ("import torch\n\ndef step(x):\n    if x.shape[0] % 2:\n"
              "        raise ValueError(f'bad {x.shape[0]}')\n    return x.sum()\n\n"
              "def example_inputs(seed):\n    return (torch.zeros(seed + 1),)\n")
    before = write(tmp_path, "before.py", source)
    report = quick(before, after=write(tmp_path, "after.py", source + "\n# same\n"))
    assert 0 < report.equivalence.original_raised < report.equivalence.trials
    assert report.equivalence.passed


def test_an_entry_that_always_raises_verifies_nothing(tmp_path):
    source = "import torch\n\ndef step(x, y):\n    return x + y\n\n" \
             "def example_inputs(seed):\n    return (torch.zeros(seed + 1),)\n"
    before = write(tmp_path, "before.py", source)
    report = quick(before, after=write(tmp_path, "after.py", source + "\n# same\n"))
    assert report.equivalence.vacuous and not report.passed
    assert "raised on every trial (TypeError" in report.problems[0]


def test_module_state_is_compared(tmp_path):
    training = '''
    import torch

    def step(model, opt, x):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    def example_inputs(seed):
        torch.manual_seed(seed)
        model = torch.nn.Linear(3, 2)
        return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), \\
            torch.randn(5, 3)
    '''
    before = write(tmp_path, "before.py", training)
    skipped = write(tmp_path, "after.py", textwrap.dedent(training).replace(
        "    opt.step()\n", ""))
    report = quick(before, after=skipped)
    paths = {f.path for f in report.equivalence.failures if f.trial == 0}
    assert "args[0].weight" in paths  # the parameters the skipped step did not update
    assert "args[1].state_dict()['state'][0]['momentum_buffer']" in paths  # optimizer state


def test_a_branch_never_driven_both_ways_fails_unless_allowed(original, tmp_path):
    after = write(tmp_path, "after.py", CORRECT)
    # seed 0 only, no adversarial inputs: always over the limit
    report = quick(original, after=after, trials=1, adversarial=False)
    assert not report.passed
    (problem,) = report.problems
    assert "line 9" in problem and "not driven both ways" in problem
    assert "--allow-untaken" in problem
    report = quick(original, after=after, trials=1, adversarial=False, allow_untaken=True)
    assert report.passed, report.problems
    (warning,) = report.equivalence.warnings
    assert "line 9" in warning and "true every time" in warning
    # The adversarial inputs (zeros) drive the other side: proven.
    report = quick(original, after=after, trials=1)
    assert report.passed, report.problems
    assert report.equivalence.adversarial_trials > 0
    assert report.equivalence.warnings == []


def test_without_after_the_fixer_output_is_verified(tmp_path):
    loop = '''
    import torch

    def step(xs: torch.Tensor):
        total = 0.0
        for x in xs:
            total += x.sum().item()
        return total

    def example_inputs(seed):
        return (torch.randn(6, 4, generator=torch.Generator().manual_seed(seed)),)
    '''
    report = quick(write(tmp_path, "loop.py", loop))
    assert report.changed and report.fixes == ["NSY201 line 7"]
    assert report.passed
    assert (report.before.syncs_per_call, report.after.syncs_per_call) == (6, 1)


def test_changes_and_instrumentation_find_the_touched_conditions():
    diff = changes(ORIGINAL, CORRECT)
    tree, probe = instrument(ORIGINAL, diff, "original.py")
    assert [(c.line, c.kind, c.why) for c in probe.conditions] == [(9, "if", "rewritten")]
    namespace = {"__nosync_verify_branch__": probe, "__nosync_verify_value__": probe.value}
    exec(compile(tree, "original.py", "exec"), namespace)
    namespace["step"](torch.ones(2, 3) * 5, torch.eye(3))
    assert (probe.conditions[0].true, probe.conditions[0].false) == (1, 0)
    # the value compared with the module-level LIMIT, for the tie trials
    assert probe.conditions[0].threshold == "LIMIT" and probe.values == {0: 5.0}


@pytest.mark.parametrize("old, new, same", [
    ("loss 0.12345678\n", "loss 0.12345679\n", True),  # float32's tolerance (NSY501, NSY503)
    ("loss 0.1235\n", "loss 0.1234\n", True),  # one unit in the last printed digit
    ("loss 0.1235\n", "loss 0.1237\n", False),
    ("loss 0.123\n", "loss 0.1230\n", False),
    ("n 1\n", "n 1.0\n", False),
    ("n 3\n", "n 4\n", False),
    ("a\nb\n", "b\na\n", False),
    ("step 1 done\n", "step 1 Done\n", False),
])
def test_printed_text_comparison(old, new, same):
    assert (compare_text(old, new, tolerance=FLOAT32) == "") is same
    if old != new:  # rules that promise identical text tolerate nothing
        assert compare_text(old, new, tolerance=EXACT) != ""


def test_timing_and_compiled_measurements(original, tmp_path):
    after = write(tmp_path, "after.py", CORRECT)
    report = verify(original, "step", after=after, trials=2, repeat=3, backend="eager",
                    device="cpu")
    data = report.as_dict()
    for version in ("before", "after"):
        assert data[version]["eager_ms"] > 0 and data[version]["compiled_ms"] > 0
        assert data[version]["eager"]["repeats"] == 3
        assert data[version]["compile_s"] > 0
    assert data["speedup"]["eager"] == pytest.approx(
        data["before"]["eager_ms"] / data["after"]["eager_ms"], rel=1e-3)
    assert "CPU: no device queue, sync cost not represented" in data["notes"]
    # the control pair: the original timed again, its distance from itself the noise band
    assert data["threads"] == 1  # one thread by default
    for mode in ("eager", "compiled"):
        assert data["control"][mode]["repeats"] == 3
        band = data["noise_band"][mode]
        assert band is not None and band >= 0
        assert data["within_noise"][mode] == (abs(data["speedup"][mode] - 1) <= band)


def test_a_ratio_inside_the_noise_band_is_a_warning_not_a_claim():
    from nosync_fix.verify.render import _speedup

    assert _speedup(1.10, 0.25).startswith("within noise")
    assert _speedup(2.0, 0.05) == "2.00x faster (noise ±5%)"
    assert _speedup(0.5, 0.05) == "2.00x slower (noise ±5%)"


def test_identical_code_is_within_noise_and_compiles_as_fast(original, tmp_path):
    """The original against itself: no speed claim, and the first compile is not cheaper for
    the version compiled second (3.08 s against 0.36 s before caches were reset)."""
    report = verify(original, "step", after=write(tmp_path, "same.py", ORIGINAL), trials=1,
                    repeat=5, backend="aot_eager", device="cpu", compiled_trials=0)
    text = render(report)
    b, a = report.before.compile_s, report.after.compile_s
    assert max(b, a) / min(b, a) < 3, (b, a)
    for mode, ratio in report.speedup.items():
        if report.within_noise[mode]:
            (row,) = [line for line in text.splitlines() if line.startswith(f"{mode} ms")]
            assert f"{ratio:.2f}x" not in row and "within noise" in row
            assert f"{mode} time: the original differs from itself" in text
    # The first compiled call has its band too: the control, the original compiled again.
    assert report.control_compile_s is not None and report.compile_noise is not None
    (row,) = [line for line in text.splitlines() if line.startswith("first compiled call")]
    assert "noise" in row or "within noise" in row


def test_checkpoint_puts_a_training_step_back_in_place():
    from nosync_fix.verify.timing import Checkpoint

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(8, 3)

    def train_step():
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
        x.mul_(1.5)

    train_step()  # momentum buffers exist from here on
    checkpoint = Checkpoint((model, optimizer, x))
    saved = {k: v.clone() for k, v in model.state_dict().items()}
    train_step()
    assert not torch.equal(model[0].weight, saved["0.weight"])
    identity = model[0].weight
    checkpoint.restore()
    for key, value in model.state_dict().items():
        assert torch.equal(value, saved[key]), key
    assert model[0].weight is identity  # restored in place: compiled guards still hold
    first = [p.clone() for p in model.parameters()]
    train_step()
    after_one = [p.clone() for p in model.parameters()]
    checkpoint.restore()
    train_step()
    assert all(torch.equal(a, b) for a, b in zip(after_one, model.parameters(), strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(first, after_one, strict=True))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_verify_on_cuda(original, tmp_path):
    after = write(tmp_path, "after.py", CORRECT)
    report = verify(original, "step", after=after, device="cuda", backend="eager", trials=2,
                    repeat=3)
    assert report.passed, report.problems
    assert report.device == "cuda" and "CPU" not in " ".join(report.notes)
    # inputs are moved to the GPU (example_inputs takes no device): every read is a sync
    assert (report.before.syncs_per_call, report.after.syncs_per_call) == (5, 1)
    assert report.before.syncs.cuda_sync_warnings >= report.after.syncs.cuda_sync_warnings > 0
    assert report.before.eager_ms > 0 and report.after.compiled_ms > 0


def test_assert_verified(original, tmp_path):
    report = assert_verified(str(original), "step", after=write(tmp_path, "a.py", CORRECT),
                             trials=2, measure_time=False, measure_breaks=False)
    assert report.passed
    with pytest.raises(AssertionError, match="does not behave like the original"):
        assert_verified(str(original), "step",
                        after=write(tmp_path, "b.py", WRONG["wrong constant"]),
                        trials=2, measure_time=False, measure_breaks=False)


@pytest.mark.parametrize("options, message", [
    ({"entry": "missing"}, "no entry function 'missing'"),
    ({"inputs": "missing"}, "no inputs function 'missing'"),
    ({"trials": 0}, "at least 1"),
    ({"backend": "tvm"}, "unknown backend"),
    ({"select": ["NSY999"]}, "NSY999"),
])
def test_usage_errors_raise(original, options, message):
    entry = options.pop("entry", "step")
    with pytest.raises(VerifyUsageError, match=message):
        verify(original, entry, measure_time=False, measure_breaks=False, **options)


# -- the command line --------------------------------------------------------------------------


def run_cli(args, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_cli_exit_codes(original, tmp_path, capsys):
    common = ["--entry", "step", "--trials", "2", "--no-timing", "--device", "cpu",
              "--backend", "eager"]
    code, out, _ = run_cli([original, *common, "--after", write(tmp_path, "a.py", CORRECT)],
                           capsys)
    assert code == 0 and "result: PASS" in out
    assert "repeats" not in out and "no timing" in out  # --no-timing times nothing
    code, out, _ = run_cli([original, *common, "--after",
                            write(tmp_path, "b.py", WRONG["dropped branch"])], capsys)
    assert code == 1 and "result: FAIL" in out and "result[0]" in out


@pytest.mark.parametrize("args, message", [
    ([], "Missing argument 'FILE'"),
    (["{file}"], "Missing option '--entry'"),
    (["{file}", "--entry", "nope"], "no entry function 'nope'"),
    (["{file}", "--entry", "step", "--inputs", "nope"], "no inputs function 'nope'"),
    (["{dir}/absent.py", "--entry", "step"], "does not exist"),
    (["{file}", "--entry", "step", "--trials", "0"], "--trials"),
    (["{file}", "--entry", "step", "--backend", "tvm"], "--backend"),
    (["{file}", "--entry", "step", "--select", "NSY999"], "NSY999"),
    (["{dir}/broken.py", "--entry", "step"], "fails when imported"),
    (["{dir}/scalar_inputs.py", "--entry", "step"], "must return a tuple"),
    (["{dir}/failing_inputs.py", "--entry", "step"], "preparing seed 0 failed: KeyError"),
])
def test_cli_usage_errors_are_one_line(original, tmp_path, capsys, args, message):
    write(tmp_path, "broken.py", "import torch\nraise RuntimeError('no GPU here')\n")
    write(tmp_path, "scalar_inputs.py",
          "def step(x):\n    return x\n\ndef example_inputs(seed):\n    return 3\n")
    write(tmp_path, "failing_inputs.py",
          "def step(x):\n    return x\n\ndef example_inputs(seed):\n    return {}['x']\n")
    args = [a.format(file=original, dir=tmp_path) for a in args]
    code, out, err = run_cli(args, capsys)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("nosync-verify: error:")
    assert message in err and "Traceback" not in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cli_cuda_without_cuda_is_a_usage_error(original, capsys):
    code, _, err = run_cli([original, "--entry", "step", "--device", "cuda"], capsys)
    assert code == 2 and "CUDA is not available" in err


def test_cli_json_report_fields(original, tmp_path, capsys):
    out_file = tmp_path / "report.json"
    code, _, _ = run_cli([original, "--entry", "step", "--after",
                          write(tmp_path, "a.py", CORRECT), "--trials", "2", "--repeat", "2",
                          "--backend", "eager", "--device", "cpu", "--json", out_file], capsys)
    assert code == 0
    data = json.loads(out_file.read_text())
    for key in ("file", "entry", "device", "torch_version", "before", "after", "equivalence",
                "speedup"):
        assert key in data
    for version in ("before", "after"):
        for key in ("graph_count", "graph_breaks", "break_reasons", "syncs", "eager_ms",
                    "compiled_ms"):
            assert key in data[version], key
    for key in ("trials", "passed", "max_abs_diff", "failures", "branch_coverage"):
        assert key in data["equivalence"], key
    assert set(data["speedup"]) >= {"eager", "compiled"}
    assert data["device"] == "cpu" and data["torch_version"] == torch.__version__
    assert data["equivalence"]["passed"] is True and data["equivalence"]["trials"] == 2
    assert data["before"]["syncs"] == 5 and data["after"]["syncs"] == 1
    assert data["before"]["break_reasons"][0]["line"] == 9
    assert data["equivalence"]["branch_coverage"][0]["both_ways"] is True


def test_cli_as_a_subprocess(original, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(SRC))
    result = subprocess.run(
        [sys.executable, "-m", "nosync_fix.verify.cli", str(original), "--entry", "step",
         "--after", str(write(tmp_path, "w.py", WRONG["wrong constant"])), "--trials", "2",
         "--no-timing", "--device", "cpu", "--backend", "eager"],
        capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "equivalence: FAILED" in result.stdout


# -- repeated compiled calls: recompiles and eager fallback -------------------------------------

PLAIN = '''
import torch


def step(x):
    return x * 2 + 1


def example_inputs(seed):
    return (torch.full((4,), float(seed)),)
'''

#: Same values on every call, but dynamo guards on the global int: a recompile per call
#: until the recompile limit, then eager mode.
RECOMPILING = PLAIN.replace("def step(x):\n    return x * 2 + 1\n",
                            "CALLS = 0\n\n\ndef step(x):\n    global CALLS\n    CALLS += 1\n"
                            "    return x * 2 + CALLS // CALLS\n")


def test_a_rewrite_that_recompiles_on_every_call_fails(tmp_path):
    report = quick(write(tmp_path, "plain.py", PLAIN),
                   after=write(tmp_path, "recompiling.py", RECOMPILING), measure_breaks=True)
    assert report.equivalence.passed  # the values agree: only the repeated calls show it
    assert report.before.repeats.calls == report.after.repeats.calls >= 20
    assert (report.before.recompiles, report.before.eager_calls) == (0, 0)
    assert report.after.recompiles >= 7 and report.after.repeats.recompile_limit
    assert report.after.eager_calls >= 10  # past the limit the frame runs eagerly
    assert any("recompiles on repeated calls" in p for p in report.problems)
    assert any("falls back to eager" in p for p in report.problems)
    text = render(report)
    assert "recompiles over 20 calls" in text and "calls run eagerly" in text


def test_deferred_output_is_not_flushed_between_repeated_calls(tmp_path):
    """A deferred print in a compiled function: pending records pile up between calls, as
    in a training loop (the verifier used to flush after every call and saw no recompile)."""
    printing = PLAIN.replace("    return x * 2 + 1\n",
                             "    y = x * 2 + 1\n    print(f'{y.sum().item():.3f}')\n"
                             "    return y\n")
    deferred = printing.replace(
        "import torch\n", "import torch\nfrom nosync_fix.runtime import deferred_print, fmt, "
        "item\n").replace("    print(f'{y.sum().item():.3f}')\n",
                          "    deferred_print(fmt('{:.3f}', item(y.sum())))\n")
    report = quick(write(tmp_path, "printing.py", printing),
                   after=write(tmp_path, "deferred.py", deferred), measure_breaks=True)
    assert report.equivalence.passed, report.equivalence.failures
    assert report.after.repeats.calls >= 20
    before, after = report.before.repeats, report.after.repeats
    # Whatever the runtime does, the verdict follows the repeated calls.
    recompiles = after.recompiles > before.recompiles
    assert recompiles == any("recompiles on repeated calls" in p for p in report.problems)


def test_a_skipped_frame_marks_breaks_as_a_lower_bound_and_every_break_is_counted(tmp_path):
    loop = '''
import torch


def step(x):
    total = 0.0
    for row in x:
        total += row.sum().item()
        total += float(row.max())
    return total


def example_inputs(seed):
    return (torch.arange(6.0).reshape(3, 2) + seed,)
'''
    # The read of line 8 leaves the loop (one float() after it); line 9 stays as it was.
    rewritten = loop.replace("        total += row.sum().item()\n",
                             "        total += row.sum().double()\n").replace(
        "    return total\n", "    return float(total)\n")
    report = quick(write(tmp_path, "loop.py", loop),
                   after=write(tmp_path, "rewritten.py", rewritten), measure_breaks=True)
    assert report.equivalence.passed, report.equivalence.failures
    # Dynamo skips both frames at their first break in the loop: lower bounds.
    assert report.before.breaks.lower_bound and report.after.breaks.lower_bound
    assert report.as_dict()["after"]["graph_breaks_lower_bound"] is True
    # Counted again with the loop resumed and its body as a frame: all of them.
    every_before, every_after = report.before.all_breaks, report.after.all_breaks
    assert not every_before.lower_bound and not every_after.lower_bound
    assert sorted(r.line for r in every_before.reasons) == [8, 9]
    assert sorted(r.line for r in every_after.reasons) == [9, 10]
    assert report.passed, report.problems  # 2 -> 2, and the skip is at line 9, unchanged
    data = report.as_dict()["after"]["all_graph_breaks"]
    assert (data["graph_breaks"], data["lower_bound"], data["loops_split"]) == (2, False, 1)
    text = render(report)
    assert ">=1" in text and "a lower bound" in text
    assert "every graph break before: 2, counted again with dynamo resuming inside loops" in text


LOOPS = '''
def loops(xs, limit):
    out = []
    total = 0
    for i, x in enumerate(xs):
        if x < 0:
            continue
        if x > limit:
            break
        for j in range(x):
            if j == 3:
                break
            total += j
        else:
            out.append(("all", x))
        seen = [y for y in xs[:i] if y == x]
        if seen:
            out.append(("again", x))
        if x == 7:
            return out, total, "seven"
    else:
        out.append("no break")
    n = 0
    while n < 3:
        n += 1
        if n == 2:
            continue
        total += n
    return out, total, i


class Holder:
    def method(self, xs):
        kept = []
        for x in xs:
            kept.append(x * 2)
        return kept
'''


@pytest.mark.parametrize("xs", [[1, 2, 5, -1, 2], [1, 9, 2], [4, 7, 1], [], [0, 3, 3]])
def test_loop_bodies_moved_into_functions_run_as_before(xs):
    from nosync_fix.verify.loopbodies import PREFIX, split_loop_bodies

    tree, moved = split_loop_bodies(LOOPS, "loops.py", "tag")
    assert moved == 4  # the outer for, the inner for, the while, the method's for
    original, split = {}, {}
    exec(compile(LOOPS, "loops.py", "exec"), original)
    exec(compile(tree, "loops.py", "exec"), split)
    assert split["loops"].__code__.co_consts  # the bodies are functions made in it
    assert any(PREFIX in str(c) and "tag" in str(c) for c in split["loops"].__code__.co_consts)
    try:
        expected = original["loops"](xs, 6)
    except Exception as error:  # `i` unbound on an empty list
        with pytest.raises(type(error)):
            split["loops"](xs, 6)
    else:
        assert split["loops"](xs, 6) == expected
    assert split["Holder"]().method(xs) == original["Holder"]().method(xs)


def test_loops_that_cannot_move_stay_as_they_are():
    from nosync_fix.verify.loopbodies import split_loop_bodies

    source = '''
def gen(xs):
    for x in xs:
        yield x


class C(list):
    def total(self, xs):
        for x in xs:
            super().append(x)


def counted(xs):
    global COUNT
    for x in xs:
        COUNT = x
'''
    _tree, moved = split_loop_bodies(source, "c.py")
    assert moved == 0


#: A loop whose first break (a data-dependent assert) makes dynamo skip the frame, with a
#: later break (a read kept by every rewrite) behind it: examples/checked_training.py.
CHECKED = '''
import torch


def step(x):
    total = torch.zeros((), dtype=torch.float64)
    for row in x:
        assert not torch.isnan(row).any(), "NaN in a row"
        total += row.sum().double()
        total += float(row.max())
    return total


def example_inputs(seed):
    return (torch.arange(6.0).reshape(3, 2) + seed,)
'''


def test_a_rewrite_skipped_later_at_a_break_the_original_has_passes(tmp_path):
    """The checked_training controls: the rewrite removes the break dynamo skipped the
    original's frame at; dynamo now skips it at a later break of the original, unchanged."""
    asserted = CHECKED.replace(
        '        assert not torch.isnan(row).any(), "NaN in a row"\n',
        '        torch._assert_async(~torch.isnan(row).any(), "NaN in a row")\n')
    report = quick(write(tmp_path, "checked.py", CHECKED),
                   after=write(tmp_path, "asserted.py", asserted), measure_breaks=True,
                   rules=["NSY401"], adversarial=False, allow_untaken=True)
    assert report.equivalence.passed, report.equivalence.failures
    skipped = [r.line for r in report.after.breaks.reasons if r.frame_skipped]
    assert skipped == [10]  # not the original's line 8: the skip moved to its own break
    assert report.before.breaks.lower_bound and report.after.breaks.lower_bound
    assert (report.before.all_breaks.graph_breaks, report.after.all_breaks.graph_breaks) == (2, 1)
    assert not report.after.all_breaks.lower_bound
    assert report.passed, report.problems
    text = render(report)
    assert "every break (loops resumed)" in text and "-1" in text


def test_a_rewrite_that_only_moves_the_skip_fails(tmp_path):
    """The break dynamo skipped at is gone, but the rewrite writes another one before the
    next: dynamo now skips at a line the rewrite wrote. The counts alone (2 -> 2) pass."""
    moved = CHECKED.replace(
        '        assert not torch.isnan(row).any(), "NaN in a row"\n',
        '        torch._assert_async(~torch.isnan(row).any(), "NaN in a row")\n'
        "        has_nan = bool(torch.isnan(row).any())\n")
    report = quick(write(tmp_path, "checked.py", CHECKED),
                   after=write(tmp_path, "moved.py", moved), measure_breaks=True,
                   rules=["NSY401"], adversarial=False, allow_untaken=True)
    assert report.equivalence.passed, report.equivalence.failures
    assert (report.before.all_breaks.graph_breaks, report.after.all_breaks.graph_breaks) == (2, 2)
    (problem,) = [p for p in report.problems if "graph breaks" in p]
    assert "only moves the skip" in problem and "line 9" in problem
    assert "a line the rewrite wrote" in problem


def test_more_breaks_than_the_original_is_known_to_have_fail_and_fewer_pass(tmp_path):
    """The evaluate controls: a module made in the frame (dynamo cannot rebuild it) stops
    dynamo even inside a resumed loop, so the original's count stays a lower bound; the
    loop body counted as its own frame still shows every read in it."""
    source = '''
import torch


def step(xs, ys):
    criterion = torch.nn.CrossEntropyLoss(reduction="sum")
    total = 0.0
    predictions = []
    for x, y in zip(xs, ys):
        total += criterion(x, y).item()
        predictions.extend(x.argmax(dim=1).tolist())
    return total, predictions


def example_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    xs = [torch.randn(4, 3, generator=g) for _ in range(3)]
    return xs, [torch.randint(0, 3, (4,), generator=g) for _ in range(3)]
'''
    deferred = source.replace(
        "        total += criterion(x, y).item()\n"
        "        predictions.extend(x.argmax(dim=1).tolist())\n",
        "        total += criterion(x, y).detach().double()\n"
        "        predictions.append(x.argmax(dim=1))\n"
    ).replace("    return total, predictions\n",
              "    total = float(total)\n"
              "    predictions = torch.cat(predictions).tolist() if predictions else []\n"
              "    return total, predictions\n")
    before = write(tmp_path, "evaluate.py", source)
    report = quick(before, after=write(tmp_path, "deferred.py", deferred), measure_breaks=True,
                   adversarial=False)
    assert report.equivalence.passed, report.equivalence.failures
    # dynamo's own counts: >=1 -> 2 (what failed the evaluate controls)
    assert report.before.breaks.lower_bound and report.before.graph_breaks == 1
    assert not report.after.breaks.lower_bound and report.after.graph_breaks == 2
    every = report.before.all_breaks
    assert every.lower_bound and every.graph_breaks == 2
    assert any(r.frame_skipped and not r.counted for r in every.reasons)
    assert report.passed, report.problems  # 2 is no more than the original's >=2
    # Three breaks after the loop where the original is known to have two: not proven.
    more = deferred.replace("    total = float(total)\n",
                            "    total = float(total)\n"
                            "    extra = float(torch.zeros(()) + total)\n")
    report = quick(before, after=write(tmp_path, "more.py", more), measure_breaks=True,
                   adversarial=False)
    assert report.equivalence.passed, report.equivalence.failures
    (problem,) = [p for p in report.problems if "graph breaks" in p]
    assert "more graph breaks" in problem and ">=2 ->" in problem
    assert "the original's a lower bound" in problem


def test_a_rewrite_that_keeps_every_step_alive_fails_on_memory(tmp_path):
    """The reads leave the loop, but each step's 1 MiB tensor is kept for them."""
    source = '''
import torch


def step(xs):
    total = 0.0
    for x in xs:
        y = x * 2
        total += y.sum().item()
    return total


def example_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return ([torch.randn(512, 512, generator=g) for _ in range(8)],)
'''
    kept = source.replace("    total = 0.0\n", "    total = 0.0\n    kept = []\n").replace(
        "        total += y.sum().item()\n", "        kept.append(y)\n").replace(
        "    return total\n", "    for y in kept:\n        total += y.sum().item()\n"
                            "    return total\n")
    before = write(tmp_path, "before.py", source)
    report = quick(before, after=write(tmp_path, "kept.py", kept), adversarial=False)
    assert report.equivalence.passed, report.equivalence.failures
    old, new = report.before.memory, report.after.memory
    assert old.calls == new.calls == 3 and "profile" in old.method
    mib = 1 << 20
    assert 1 * mib <= old.peak_bytes <= 3 * mib  # y, and x * 2 of the next step
    assert new.peak_bytes >= 8 * mib  # all eight y at once
    assert old.kept_bytes == new.kept_bytes == 0
    (problem,) = [p for p in report.problems if "memory" in p]
    assert "peak memory over 3 calls" in problem and "1.5x" in problem
    text = render(report)
    assert "peak memory over 3 calls" in text and "MiB" in text
    assert report.as_dict()["after"]["memory"]["peak_bytes"] == new.peak_bytes
    # The original against itself: the same peak, no failure.
    report = quick(before, after=before, adversarial=False)
    assert report.before.memory.peak_bytes == report.after.memory.peak_bytes
    assert report.passed, report.problems


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_memory_is_device_memory_on_cuda():
    from nosync_fix.verify.memory import measure

    kept = []

    def call():
        x = torch.ones(256, 1024, device="cuda")  # 1 MiB
        kept.append(x * 2)  # kept: 1 MiB per call; x and x * 2 at once: 2 MiB

    report = measure(call, lambda: None, "cuda", calls=3)
    assert report.method.startswith("CUDA") and report.error is None
    mib = 1 << 20
    assert report.kept_bytes == 3 * mib
    assert 4 * mib <= report.peak_bytes <= 5 * mib  # two kept, then x and x * 2


def test_memory_grows_only_past_the_factor_and_the_slack():
    from nosync_fix.verify.memory import SLACK, MemoryReport, grows, size

    def memory(peak, kept=0):
        return MemoryReport(calls=3, peak_bytes=peak, kept_bytes=kept)

    assert grows(memory(100), memory(100 + SLACK)) == []  # 1 MiB more is allowed
    assert grows(memory(10 * SLACK), memory(14 * SLACK)) == []  # 1.4x is allowed
    (problem,) = grows(memory(100), memory(100 + 2 * SLACK))
    assert "peak memory" in problem and "100 B -> 2 MiB" in problem
    (problem,) = grows(memory(0, 0), memory(0, 3 * SLACK))
    assert "left allocated" in problem
    assert (size(512), size(1536), size(3 << 30)) == ("512 B", "1.5 KiB", "3 GiB")


def test_the_search_finds_and_shrinks_what_the_fixed_adversarial_inputs_miss(tmp_path):
    """The rewrite checks the first element only: NaN at element 0 (the fixed `nan` input)
    cannot tell them apart, a NaN anywhere else can."""
    source = '''
import torch


def step(xs):
    total = torch.zeros(())
    for x in xs:
        if torch.isnan(x).any():
            continue
        total = total + x.sum()
    return total


def example_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return ([torch.randn(4, generator=g) for _ in range(3)],)
'''
    first_only = source.replace("        if torch.isnan(x).any():\n",
                                "        if torch.isnan(x[0]):\n")
    before = write(tmp_path, "before.py", source)
    after = write(tmp_path, "first_only.py", first_only)
    report = quick(before, after=after, search=0)
    assert report.passed, report.problems  # what the fixed inputs alone let through
    report = quick(before, after=after)
    assert not report.passed
    eq = report.equivalence
    assert eq.search_tried > 0
    # Shrunk: one change, the first tensor, the first element that is not element 0.
    assert eq.search_input == "args[0][0] element 1 = nan", eq.search_input
    (failure,) = [f for f in eq.failures if f.input.startswith("search")]
    assert failure.path == "result"
    text = render(report)
    assert "shrunk failing input (hypothesis" in text and "element 1 = nan" in text
    assert report.as_dict()["equivalence"]["search"]["failing_input"] == eq.search_input
    # The right rewrite survives the search.
    report = quick(before, after=before)
    assert report.passed and report.equivalence.search_tried > 0


# -- compiled equivalence ----------------------------------------------------------------------


def test_a_rewrite_whose_compiled_output_differs_fails(tmp_path):
    """Eager the two agree on every trial; compiled the rewrite is off by 0.47."""
    compiled_only = PLAIN.replace(
        "    return x * 2 + 1\n",
        "    y = x * 2 + 1\n    if torch.compiler.is_compiling():\n        y = y + 0.47\n"
        "    return y\n")
    plain = write(tmp_path, "plain.py", PLAIN)
    report = quick(plain, after=write(tmp_path, "compiled_only.py", compiled_only),
                   measure_breaks=True)
    eq = report.equivalence
    assert eq.failed_trials == 0  # eager: identical
    assert eq.compiled_trials == 3 and eq.compiled_failed == 3
    assert not report.passed
    assert eq.failures[0].path == "compiled: result"
    assert "compiled trials" in render(report)
    # the same file against itself passes compiled too
    same = quick(plain, after=write(tmp_path, "same.py", PLAIN), measure_breaks=True)
    assert same.passed and same.equivalence.compiled_trials == 3


def test_compiled_printed_text_is_compared(tmp_path):
    talk = PLAIN.replace("    return x * 2 + 1\n",
                         "    print('n', x.shape[0])\n    return x * 2 + 1\n")
    wrong = talk.replace("    print('n', x.shape[0])\n",
                         "    print('n', x.shape[0] + int(torch.compiler.is_compiling()))\n")
    report = quick(write(tmp_path, "talk.py", talk), after=write(tmp_path, "wrong.py", wrong),
                   measure_breaks=True)
    assert report.equivalence.failed_trials == 0 and report.equivalence.compiled_failed
    assert any(f.path == "compiled: printed (stdout)" for f in report.equivalence.failures)


# -- exact text, per-rule tolerances -----------------------------------------------------------

#: A deferred-print rewrite (NSY301's promise: byte-identical text) whose number is off in
#: its last printed digit; and an accumulation in float32 where Python's was float64.
LAST_DIGIT = CORRECT.replace('print(f"total {total:.4f}")',
                             'print(f"total {total + 0.00006:.4f}")')
FLOAT32_SUM = CORRECT.replace("row.sum().detach().double()", "row.sum().detach()")


@pytest.mark.parametrize("wrong", [LAST_DIGIT, FLOAT32_SUM], ids=["last digit", "float32 sum"])
def test_numbers_off_in_the_last_digit_fail_where_the_rule_promises_identical_output(
        original, tmp_path, wrong):
    after = write(tmp_path, "after.py", wrong)
    report = quick(original, after=after, trials=6, rules=["NSY301", "NSY201"])
    assert report.tolerance is EXACT and "tolerance: exact" in render(report)
    assert not report.passed, "an exact rule tolerated a changed number"
    # the same file under a rule whose page allows float32 rounding passes (text too)
    loose = quick(original, after=after, trials=6, rules=["NSY503"])
    assert loose.tolerance is FLOAT32 and loose.tolerance_rules == ["NSY503"]
    if wrong is FLOAT32_SUM:
        assert loose.equivalence.passed, loose.equivalence.failures


def test_tolerances_are_per_rule_and_tight():
    assert tolerance_for([]) == (EXACT, [])
    assert tolerance_for(["NSY301", "NSY101"])[0] is EXACT
    assert tolerance_for(["NSY301", "NSY503"]) == (FLOAT32, ["NSY503"])
    chosen, _ = tolerance_for(["NSY502"])
    assert chosen.rtol <= 1e-15 and chosen.text_numbers


# -- a module inside a package -----------------------------------------------------------------


@pytest.fixture
def package(tmp_path: Path, monkeypatch) -> Path:
    """tmp/proj/models/{__init__,helper,train}.py; train imports its sibling relatively."""
    pkg = tmp_path / "proj" / "models"
    pkg.mkdir(parents=True)
    write(pkg, "__init__.py", "")
    write(pkg, "helper.py", "LIMIT = 1.0\n")
    write(pkg, "train.py", ORIGINAL.replace("LIMIT = 1.0\n", "from .helper import LIMIT\n"))
    write(pkg, "train_fixed.py", CORRECT.replace("LIMIT = 1.0\n", "from .helper import LIMIT\n"))
    monkeypatch.chdir(tmp_path / "proj")
    return pkg


def test_a_file_inside_a_package_is_verified_with_its_relative_imports(package):
    report = quick(package / "train.py", after=package / "train_fixed.py")
    assert report.passed, report.problems
    assert any("package models" in note for note in report.notes)
    wrong = write(package, "train_wrong.py", WRONG["wrong constant"].replace(
        "LIMIT = 1.0\n", "from .helper import LIMIT\n"))
    assert not quick(package / "train.py", after=wrong).passed


@pytest.mark.parametrize("how", [["models.train:step"], ["-m", "models.train", "--entry",
                                                         "step"]])
def test_cli_takes_a_module_of_a_package(package, capsys, how):
    code, out, err = run_cli([*how, "--after", package / "train_fixed.py", "--trials", "2",
                              "--no-timing", "--device", "cpu", "--backend", "eager"], capsys)
    assert code == 0, out + err
    assert "result: PASS" in out and "package models" in out
    code, _, err = run_cli(["-m", "models.absent:step", "--no-timing"], capsys)
    assert code == 2 and "no Python source for module 'models.absent'" in err


def test_extra_draws_from_numpys_generator_are_caught(tmp_path):
    numpy = pytest.importorskip("numpy")
    del numpy
    before = write(tmp_path, "before.py", """
        import numpy as np
        import torch

        def step(x):
            return x * 2

        def example_inputs(seed):
            return (torch.ones(3),)
        """)
    after = write(tmp_path, "after.py", """
        import numpy as np
        import torch

        def step(x):
            jitter = 0.0 * np.random.random()  # a draw the original did not make
            return x * 2 + jitter

        def example_inputs(seed):
            return (torch.ones(3),)
        """)
    report = quick(before, after=after)
    assert not report.passed
    assert any(f.path == "rng.numpy.position" for f in report.equivalence.failures)


# -- adversarial inputs ------------------------------------------------------------------------


def test_a_difference_only_on_nan_inputs_is_caught_and_named(original, tmp_path):
    # `not (m > LIMIT)` is not `m <= LIMIT` when m is NaN: the seeds never show it.
    negated = CORRECT.replace("torch.where(y.abs().max() > LIMIT, y / y.abs().max(), y)",
                              "torch.where(y.abs().max() <= LIMIT, y, y / y.abs().max())")
    after = write(tmp_path, "after.py", negated)
    assert quick(original, after=after, adversarial=False, allow_untaken=True).passed
    report = quick(original, after=after)
    assert not report.passed
    assert report.equivalence.failed_trials == 0 and report.equivalence.adversarial_failed
    assert {f.input for f in report.equivalence.failures} >= {"nan"}
    assert "adversarial input: nan" in render(report)
    assert report.as_dict()["equivalence"]["failures"][0]["input"]


EMPTY_LOOP = '''
import torch


def step(xs):
    total = 0.0
    for x in xs:
        total += x.sum().item()
    return total


def example_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return ([torch.randn(3, generator=g) for _ in range(3)],)
'''


def test_a_difference_only_on_an_empty_loop_is_caught(tmp_path):
    stacked = EMPTY_LOOP.replace(
        "    total = 0.0\n    for x in xs:\n        total += x.sum().item()\n    return total\n",
        "    return torch.stack([x.sum().double() for x in xs]).cumsum(0)[-1].item()\n")
    assert stacked != EMPTY_LOOP
    before = write(tmp_path, "before.py", EMPTY_LOOP)
    after = write(tmp_path, "after.py", stacked)
    assert quick(before, after=after, adversarial=False).equivalence.passed
    report = quick(before, after=after)
    assert not report.passed
    fixed = {f.input for f in report.equivalence.failures if not f.input.startswith("search")}
    assert fixed == {"empty"}
    # The search (hypothesis) finds it too, shrunk to the one change that matters.
    assert report.equivalence.search_input == "args[0] cut to 0 items"
    assert report.equivalence.adversarial_failed == 3  # the first two seeds, and the search


def test_inputs_can_build_their_own_adversarial_inputs(tmp_path):
    hinted = EMPTY_LOOP.replace(
        "def example_inputs(seed):\n",
        "def example_inputs(seed, adversarial=None):\n"
        "    if adversarial is not None:\n"
        "        return ([torch.full((2,), 7.0)],) if adversarial == 'one' else None\n")
    before = write(tmp_path, "before.py", hinted)
    after = write(tmp_path, "after.py", hinted.replace("total += x.sum().item()",
                                                       "total += min(x.sum().item(), 5.0)"))
    report = quick(before, after=after, adversarial=False)
    assert report.passed  # the seeds' sums stay below 5
    report = quick(before, after=after)
    assert not report.passed
    fixed = {f.input for f in report.equivalence.failures if not f.input.startswith("search")}
    assert fixed == {"one"}
    assert report.equivalence.adversarial_trials == 2  # only "one" was built, on two seeds
    # The search changes the seeds' own inputs: a sum above 5 shows the clamp as well.
    assert report.equivalence.search_input


def test_an_async_assert_may_raise_runtime_error_for_assertion_error(tmp_path):
    checked = '''
import torch


def step(x):
    assert x.sum().item() < 1e3, "too large"
    return x * 2


def example_inputs(seed):
    return (torch.full((3,), float(seed)),)
'''
    before = write(tmp_path, "before.py", checked)
    after = write(tmp_path, "after.py", checked.replace(
        "    assert x.sum().item() < 1e3, \"too large\"\n",
        "    torch._assert_async(x.sum() < 1e3, \"too large\")\n"))
    report = quick(before, after=after, rules=["NSY401"])  # "large" makes both raise
    assert report.passed, report.equivalence.failures
    report = quick(before, after=after)  # no rule that allows it: another exception type
    assert not report.passed
    assert any("raised AssertionError before, RuntimeError after" in f.detail
               for f in report.equivalence.failures)


# -- graphs kept alive -------------------------------------------------------------------------

TRAINING = '''
import torch


def step(model, opt, batches):
    total = 0.0
    for x in batches:
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return total


def example_inputs(seed):
    torch.manual_seed(seed)
    model = torch.nn.Linear(3, 1)
    return model, torch.optim.SGD(model.parameters(), lr=0.1), [torch.randn(4, 3)
                                                                 for _ in range(3)]
'''


@pytest.mark.parametrize("accumulate, kept", [
    ("loss.detach().double()", False),
    ("loss.double()", True),  # same values, every step's graph kept alive
])
def test_an_accumulator_attached_to_the_autograd_graph_fails(tmp_path, accumulate, kept):
    rewrite = TRAINING.replace("        total += loss.item()\n",
                               f"        total += {accumulate}\n").replace(
        "    return total\n", "    return float(total)\n")
    before = write(tmp_path, "before.py", TRAINING)
    report = quick(before, after=write(tmp_path, "after.py", rewrite))
    assert report.equivalence.passed, report.equivalence.failures
    assert report.passed is not kept, report.problems
    assert report.before.retention.per_call == 0
    if kept:
        (problem,) = report.problems
        assert "keeps autograd graphs alive after backward()" in problem and "line 12" in problem
        assert report.as_dict()["after"]["graph_retention"] == 6  # .double() and += per step


def test_cli_allow_untaken_and_no_adversarial(original, tmp_path, capsys):
    after = str(write(tmp_path, "after.py", CORRECT))
    base = [str(original), "--entry", "step", "--after", after, "--trials", "1", "--no-timing",
            "--backend", "eager", "--device", "cpu", "--no-adversarial"]
    with pytest.raises(SystemExit) as exit_info:
        main(base)
    assert exit_info.value.code == 1
    assert "not driven both ways" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main([*base, "--allow-untaken"])
    assert exit_info.value.code == 0


def test_a_skip_at_a_reworded_line_where_the_original_skipped_is_not_moved(tmp_path):
    loop = '''
import torch


def step(x):
    total = 0.0
    for row in x:
        if not torch.isfinite(row.sum()):
            continue
        total += float(row.max())
    return total


def example_inputs(seed):
    return (torch.arange(6.0).reshape(3, 2) + seed,)
'''
    reworded = loop.replace("        if not torch.isfinite(row.sum()):\n",
                            "        if not bool(torch.isfinite(row.sum())):\n")
    report = quick(write(tmp_path, "loop.py", loop), after=write(tmp_path, "same.py", reworded),
                   measure_breaks=True, adversarial=False, allow_untaken=True)
    assert report.before.breaks.lower_bound and report.after.breaks.lower_bound
    assert report.passed, report.problems


def test_a_threshold_is_tried_at_the_compared_value_and_its_neighbours(original, tmp_path):
    # `>` became `>=`: only a value exactly at LIMIT tells them apart.
    at_tie = CORRECT.replace("y.abs().max() > LIMIT", "y.abs().max() >= LIMIT")
    report = quick(original, after=write(tmp_path, "after.py", CORRECT))
    assert report.passed, report.problems  # the right rewrite agrees at and next to the tie
    report = quick(original, after=write(tmp_path, "tie.py", at_tie))
    assert not report.passed
    assert report.equivalence.failed_trials == 0
    (given,) = {f.input for f in report.equivalence.failures if not f.input.startswith("search")}
    assert given.startswith("LIMIT = ")


def test_a_blocking_copy_in_place_of_a_read_fails(tmp_path):
    source = '''
import torch


def step(xs):
    total = 0.0
    for x in xs:
        total += x.sum().item()
    return total


def example_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return ([torch.randn(3, generator=g) for _ in range(3)],)
'''
    copied = source.replace("        total += x.sum().item()\n",
                            "        total += x.sum().cpu().double()\n").replace(
        "    return total\n", "    return float(total)\n")
    before = write(tmp_path, "before.py", source)
    report = quick(before, after=write(tmp_path, "after.py", copied))
    assert report.equivalence.passed, report.equivalence.failures
    assert any("copies to the host" in p and "line 8" in p for p in report.problems), \
        report.problems
