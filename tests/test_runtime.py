"""The deferred-output runtime: exact text, no device reads when recording, flush policy,
ordering, logging records, threads, fork and torch.compile."""

from __future__ import annotations

import io
import logging
import math
import operator
import os
import sys
import threading
import time

import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402

from nosync_fix import runtime  # noqa: E402
from nosync_fix.runtime import (  # noqa: E402
    _buffer,
    deferred_call,
    deferred_log,
    deferred_print,
    flush,
    fmt,
    item,
    percent_fmt,
    tolist,
)


@pytest.fixture(autouse=True)
def clean_buffer():
    """Every test starts and ends with an empty buffer and the default policy."""
    flush()
    saved = (_buffer.flush_every, _buffer.flush_seconds, _buffer.immediate)
    runtime.configure(flush_every=10**9, flush_seconds=10**9, immediate=False)
    yield
    flush()
    _buffer.flush_every, _buffer.flush_seconds, _buffer.immediate = saved


class HostReads(TorchFunctionMode):
    """Counts the calls that copy a device value to the host."""

    READS = {torch.Tensor.item, torch.Tensor.tolist, torch.Tensor.__format__,
             torch.Tensor.__float__, torch.Tensor.__int__, torch.Tensor.__bool__,
             torch.Tensor.__index__, torch.Tensor.cpu, torch.Tensor.numpy,
             torch.Tensor.__repr__, torch.Tensor.__str__}

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in self.READS:
            self.reads.append(func.__name__)
        return func(*args, **(kwargs or {}))


def printed(*objects, **kwargs) -> str:
    """What deferred_print writes for these arguments, after a flush."""
    buffer = io.StringIO()
    deferred_print(*objects, file=buffer, **kwargs)
    flush()
    return buffer.getvalue()


def expected(*objects, **kwargs) -> str:
    buffer = io.StringIO()
    print(*objects, file=buffer, **kwargs)
    return buffer.getvalue()


# -- recording reads nothing -----------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")
def test_recording_reads_no_device_value() -> None:
    loss = torch.tensor(0.25, requires_grad=True) * 2
    scalar = torch.tensor(3.0)
    vector = torch.arange(4)
    logger = logging.getLogger("test_runtime.reads")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    buffer = io.StringIO()
    with HostReads() as mode:
        deferred_print(fmt("loss {:.4f} {:.2f}% {:.1f} {}", item(loss), item(loss) * 100,
                           scalar, scalar), file=buffer)
        deferred_print(item(loss, float), round(item(loss), 2), tolist(vector), file=buffer)
        deferred_print(percent_fmt("%d %.3f", (7, item(loss))), file=buffer)
        deferred_log(logger.info, "loss %.3f", item(loss))
        deferred_call(buffer.write, fmt("{}\n", item(loss)))
    assert mode.reads == []
    flush()
    assert buffer.getvalue() == (
        "loss 0.5000 50.00% 3.0 3.0\n0.5 0.5 [0, 1, 2, 3]\n7 0.500\n0.5\n")


# -- the same text ---------------------------------------------------------------------------

SPECS = ["", ".4f", ".2e", "g", ">12.3f", "+.1%", ",.2f", "08.3f", ".3g", "e", "^9", "_.1f"]
FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=32)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=FLOATS, spec=st.sampled_from(SPECS),
       dtype=st.sampled_from([torch.float32, torch.float64, torch.bfloat16]))
def test_fstring_fields_print_the_same_text(value: float, spec: str, dtype) -> None:
    t = torch.tensor(value, dtype=dtype)
    template = "x {:" + spec + "} y {} z {:" + spec + "}"
    original = f"x {t.item():{spec}} y {t.item()} z {t:{spec}}"
    assert printed(fmt(template, item(t), item(t), t)) == expected(original)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(FLOATS, st.integers(-(2**31), 2**31)),
       other=st.one_of(st.floats(allow_nan=False, width=32), st.integers(-50, 50)),
       op=st.sampled_from([operator.add, operator.sub, operator.mul, operator.truediv,
                           operator.floordiv, operator.mod, operator.pow]),
       reflected=st.booleans())
def test_arithmetic_is_pythons_own(value, other, op, reflected) -> None:
    t = torch.tensor(value)
    read = t.item()
    exponent = read if reflected else other
    assume(op is not operator.pow or not isinstance(exponent, int) or abs(exponent) <= 64)
    try:
        want = op(other, read) if reflected else op(read, other)
    except (ZeroDivisionError, OverflowError, ValueError) as error:
        deferred = op(other, item(t)) if reflected else op(item(t), other)
        with pytest.raises(type(error)):
            printed(deferred)
        flush()
        return
    deferred = op(other, item(t)) if reflected else op(item(t), other)
    assert printed(deferred) == expected(want)
    assert printed(fmt("{!r}", deferred)) == expected(repr(want))


def test_unary_abs_and_round() -> None:
    t = torch.tensor(-2.345678)
    v = t.item()
    assert printed(-item(t), +item(t), abs(item(t)), round(item(t)), round(item(t), 3)) == (
        expected(-v, +v, abs(v), round(v), round(v, 3)))


@pytest.mark.parametrize("template,args", [
    ("%d: %.3f", (7, "LOSS")),
    ("%(loss).2e %(step)s", {"loss": "LOSS", "step": 3}),
    ("loss %s", "LOSS"),
    ("%5.1f%%", "LOSS"),
])
def test_percent_format_prints_the_same_text(template: str, args) -> None:
    t = torch.tensor(0.123456, dtype=torch.float64)

    def fill(value, deferred: bool):
        replace = item(t) if deferred else t.item()
        if value == "LOSS":
            return replace
        if isinstance(value, tuple):
            return tuple(fill(v, deferred) for v in value)
        if isinstance(value, dict):
            return {k: fill(v, deferred) for k, v in value.items()}
        return value

    assert printed(percent_fmt(template, fill(args, True))) == expected(
        template % fill(args, False))


def test_percent_format_reads_tensors_formatted_as_numbers_at_flush() -> None:
    t = torch.tensor(2.75)
    n = torch.tensor(3)
    want = "%.3f %d %5.1e" % (t, n, t)  # noqa: UP031  (the % semantics are the point)
    with HostReads() as mode:
        positional = percent_fmt("%.3f %d %5.1e", (t, n, t))
        named = percent_fmt("%(x).2f %(n)i", {"x": t, "n": n})
        single = percent_fmt("%g", t)
    assert mode.reads == []
    t.add_(1)  # the values when the lines ran are printed
    assert printed(positional, named, single, sep="|") == expected(want, "2.75 3", "2.75",
                                                                   sep="|")
    assert percent_fmt("%s", (t,)) == "tensor(3.7500)"  # `tensor(...)` text: formatted at once


def test_conversions_and_tolist() -> None:
    i = torch.tensor(7)
    f = torch.tensor(2.5)
    b = torch.tensor(True)
    m = torch.tensor([[1.5, 2.0], [3.0, 4.25]])
    assert printed(item(f, int), item(i, float), item(b), item(b, int), tolist(m),
                   item(f, complex)) == expected(int(f), float(i), b.item(), int(b), m.tolist(),
                                                 complex(f))


def test_tensors_in_fields_format_like_the_tensor() -> None:
    grad = torch.tensor([1.0, 2.0], requires_grad=True) * 3
    zero_dim = torch.tensor(0.5, requires_grad=True) * 2
    assert printed(fmt("{} {!r} {:.2f} {} {!s}", grad, grad, zero_dim, zero_dim, zero_dim)) == (
        expected(f"{grad} {grad!r} {zero_dim:.2f} {zero_dim} {zero_dim!s}"))
    assert printed(zero_dim, grad) == expected(zero_dim, grad)


def test_templates_it_does_not_parse_are_formatted_at_once() -> None:
    t = torch.tensor(1.25)

    class Point:
        x = 3

    for template in ("{0.x} {1:.2f}", "{1:{0}}", "{0[1]} {1}"):
        args = {"{0.x} {1:.2f}": (Point(), item(t)), "{1:{0}}": (8, item(t)),
                "{0[1]} {1}": ([4, 5], item(t))}[template]
        text = fmt(template, *args)
        assert isinstance(text, str)
        assert text == template.format(*(a.value() if hasattr(a, "value") else a
                                         for a in args))
    with pytest.raises(IndexError):
        fmt("{} {}", item(t))
    with pytest.raises(ValueError):
        fmt("{} {0}", 1, 2)


def test_print_keywords() -> None:
    t = torch.tensor(1.5)
    assert printed("a", item(t), sep="", end="!") == expected("a", t.item(), sep="", end="!")
    assert printed("a", item(t), sep=None, end=None) == expected("a", t.item())
    with pytest.raises(TypeError, match="sep must be None or a string, not int"):
        deferred_print("a", sep=1)
    with pytest.raises(AttributeError):
        deferred_print("a", file=object())


def test_print_to_stderr_and_flush(capsys) -> None:
    t = torch.tensor(2.0)
    deferred_print("err", item(t), file=sys.stderr, flush=True)
    deferred_print("out", item(t))
    flush()
    out, err = capsys.readouterr()
    assert (out, err) == ("out 2.0\n", "err 2.0\n")


def test_values_are_captured_when_recorded() -> None:
    losses = [1, 2]
    t = torch.tensor(1.0)

    class Mutable:
        def __init__(self):
            self.n = 0

        def __str__(self):
            return f"<{self.n}>"

    thing = Mutable()
    buffer = io.StringIO()
    deferred_print(losses, fmt("{} {} {:.1f} {}", losses, thing, item(t), t), thing,
                   percent_fmt("%s %.1f", (losses, item(t))), file=buffer)
    losses.append(3)
    thing.n = 9
    t.add_(5)
    flush()
    assert buffer.getvalue() == "[1, 2] [1, 2] <0> 1.0 1.0 <0> [1, 2] 1.0\n"


# -- flushing --------------------------------------------------------------------------------


def test_flush_every_n_records() -> None:
    runtime.configure(flush_every=3)
    buffer = io.StringIO()
    deferred_print(1, file=buffer)
    deferred_print(2, file=buffer)
    assert runtime.pending() == 2 and buffer.getvalue() == ""
    deferred_print(3, file=buffer)
    assert runtime.pending() == 0 and buffer.getvalue() == "1\n2\n3\n"


def test_flush_after_seconds() -> None:
    runtime.configure(flush_seconds=0.05)
    buffer = io.StringIO()
    flush()
    deferred_print(1, file=buffer)
    assert runtime.pending() == 1
    time.sleep(0.06)
    deferred_print(2, file=buffer)
    assert runtime.pending() == 0 and buffer.getvalue() == "1\n2\n"


def test_immediate_mode() -> None:
    runtime.configure(immediate=True)
    buffer = io.StringIO()
    deferred_print(item(torch.tensor(4)), file=buffer)
    assert buffer.getvalue() == "4\n"


def test_a_failing_record_keeps_the_others() -> None:
    buffer = io.StringIO()
    deferred_print("before", file=buffer)
    deferred_print(item(torch.tensor(1.0)) / 0, file=buffer)
    deferred_print("after", file=buffer)
    with pytest.raises(ZeroDivisionError):
        flush()
    assert buffer.getvalue() == "before\n"
    flush()
    assert buffer.getvalue() == "before\nafter\n"


def test_plain_output_does_not_overtake_pending_lines(capsys) -> None:
    deferred_print("deferred", item(torch.tensor(1)))
    print("plain")
    sys.stderr.write("error\n")
    deferred_print("again", file=sys.stderr)
    sys.stdout.flush()
    out, err = capsys.readouterr()
    assert out == "deferred 1\nplain\n"
    assert err == "error\nagain\n"


def test_print_under_a_redirection_is_written_at_once() -> None:
    import contextlib

    deferred_print("before")  # pending, for the stream in place outside the redirection
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        deferred_print("inside", item(torch.tensor(1)))
        assert buffer.getvalue() == "inside 1\n" and runtime.pending() == 0
    deferred_print("explicit file", file=buffer)  # a file of its own: deferred as before
    assert runtime.pending() == 1


def test_verify_capture_keeps_prints_deferred() -> None:
    from nosync_fix.verify.capture import captured

    with captured() as printed:
        deferred_print("a", item(torch.tensor(1)))
        deferred_print("b", item(torch.tensor(2)), file=sys.stderr)
        assert runtime.pending() == 2  # one flush, one sync, as on a terminal
        flush()
    assert (printed.stdout, printed.stderr) == ("a 1\n", "b 2\n")


def test_a_write_during_another_threads_flush_is_queued_not_blocked() -> None:
    buffer = io.StringIO()
    stream = runtime.OrderedStream(buffer)
    deferred_print("first", file=buffer)
    held, release = threading.Event(), threading.Event()

    def hold_lock():
        with _buffer._lock:
            held.set()
            release.wait(5)

    holder = threading.Thread(target=hold_lock)
    holder.start()
    held.wait(5)
    assert stream.write("second\n") == len("second\n")  # returns at once
    release.set()
    holder.join()
    assert buffer.getvalue() == ""
    flush()
    assert buffer.getvalue() == "first\nsecond\n"


def test_copy_to_host_is_one_transfer_and_exact() -> None:
    tensors = [torch.tensor(1.5), torch.tensor([1, 2, 3]), torch.tensor(True),
               torch.randn(2, 3).bfloat16(), torch.tensor([1 + 2j], dtype=torch.complex64),
               torch.empty(0), torch.tensor(2**62), torch.randn(3, dtype=torch.float64),
               torch.tensor([0.1], dtype=torch.float16)]

    class Calls(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names: list[str] = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    with Calls() as calls:
        host = _buffer.copy_to_host(tensors)
    assert calls.names.count("cat") == 1 and calls.names.count("cpu") == 1
    for t in tensors:
        assert host[id(t)].dtype == t.dtype and host[id(t)].shape == t.shape
        assert torch.equal(host[id(t)], t)


# -- logging ---------------------------------------------------------------------------------


@pytest.fixture
def logger():
    log = logging.getLogger("test_runtime.logger")
    log.setLevel(logging.DEBUG)
    log.propagate = False
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter(
        "%(levelname)s %(name)s %(funcName)s:%(lineno)d %(threadName)s %(k)s %(message)s",
        defaults={"k": "-"}))
    log.addHandler(handler)
    log.stream = stream
    yield log
    log.removeHandler(handler)


def test_log_record_is_the_original_one(logger) -> None:
    t = torch.tensor(0.5)
    for deferred in (True, False):  # the same lines make both records
        call = deferred_log if deferred else (
            lambda method, *a, **k: method(*a, stacklevel=2, **k))
        call(logger.info, "loss %.3f step %d", item(t) if deferred else t.item(), 3)
        call(logger.warning, fmt("f {:.1f}", item(t)) if deferred else f"f {t.item():.1f}")
        call(logger.log, logging.ERROR, "extra", extra={"k": "K"})
        call(logger.debug, "%(a)s-%(b).2f", {"a": 1, "b": item(t) if deferred else t.item()})
        flush()
    first, second = logger.stream.getvalue().splitlines()[:4], (
        logger.stream.getvalue().splitlines()[4:])
    assert first == second
    assert first[0].startswith("INFO test_runtime.logger test_log_record_is_the_original_one:")


def test_log_record_time_and_exception_are_taken_when_called(logger) -> None:
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    logger.addHandler(Keep())
    before = time.time()
    try:
        raise ValueError("boom")
    except ValueError:
        deferred_log(logger.exception, "failed at %.1f", item(torch.tensor(1.0)))
    time.sleep(0.05)
    flush()
    (record,) = records
    assert before <= record.created < before + 0.04
    assert record.exc_info[0] is ValueError
    assert "ValueError: boom" in logger.stream.getvalue()


def test_disabled_level_records_nothing(logger) -> None:
    logger.setLevel(logging.WARNING)
    with HostReads() as mode:
        deferred_log(logger.info, "x %f", item(torch.tensor(1.0)))
    assert runtime.pending() == 0 and mode.reads == []


def test_adapters_and_overrides_log_at_once(logger) -> None:
    adapter = logging.LoggerAdapter(logger, {"k": "A"})
    deferred_log(adapter.info, "adapted %.1f", item(torch.tensor(2.0)))
    assert runtime.pending() == 0
    assert logger.stream.getvalue().startswith(
        "INFO test_runtime.logger test_adapters_and_overrides_log_at_once:")
    assert logger.stream.getvalue().rstrip().endswith("A adapted 2.0")


def test_ordinary_logging_does_not_overtake_pending_records(logger) -> None:
    raw = io.StringIO()
    other = logging.getLogger("test_runtime.other")
    other.propagate = False
    handler = logging.StreamHandler(raw)
    other.addHandler(handler)
    try:
        deferred_print("deferred", file=raw)
        other.warning("ordinary")
        assert raw.getvalue() == "deferred\nordinary\n"
    finally:
        other.removeHandler(handler)


# -- threads, fork, compile ------------------------------------------------------------------


def test_threads_keep_their_own_order() -> None:
    runtime.configure(flush_every=7)
    buffer = io.StringIO()

    def work(name: str) -> None:
        for i in range(200):
            deferred_print(fmt("{} {}", name, item(torch.tensor(i))), file=buffer)

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    flush()
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 1200
    for n in range(6):
        assert [int(line.split()[1]) for line in lines if line.startswith(f"t{n} ")] == (
            list(range(200)))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_drops_the_parents_pending_records() -> None:
    read_end, write_end = os.pipe()
    buffer = io.StringIO()
    deferred_print("parent", file=buffer)
    pid = os.fork()
    if pid == 0:  # the child
        os.write(write_end, str(runtime.pending()).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read_end, 16) == b"0"
    assert runtime.pending() == 1
    flush()
    assert buffer.getvalue() == "parent\n"


def _compiled_step(x: torch.Tensor, step: int) -> torch.Tensor:
    loss = (x * 2).sum()
    deferred_print(fmt("step {} loss {:.4f} ({:.1f}%) {:.2f}", step, item(loss),
                       item(loss) * 100, loss))
    deferred_print("mean", round(item(loss.mean()), 3), tolist(x), sep=", ")
    deferred_print(percent_fmt("%d %.3f", (step, item(loss, float))))
    deferred_call(print, "call", item(loss))
    return loss + 1


@pytest.mark.slow
def test_recording_inside_torch_compile_has_no_graph_break() -> None:
    explanation = torch._dynamo.explain(_compiled_step)(torch.ones(3), 5)
    flush()
    assert explanation.graph_break_count == 0 and explanation.break_reasons == []
    assert explanation.graph_count == 1


@pytest.mark.slow
def test_compiled_records_print_what_eager_records_print(capsys) -> None:
    torch._dynamo.reset()
    compiled = torch.compile(_compiled_step, backend="aot_eager", fullgraph=True)
    for step in range(3):
        _compiled_step(torch.ones(3) * step, step)
    flush()
    eager = capsys.readouterr().out
    for step in range(3):
        compiled(torch.ones(3) * step, step)
    flush()
    assert capsys.readouterr().out == eager
    assert "step 2 loss 12.0000 (1200.0%) 12.00" in eager


def test_nan_and_inf_keep_their_spelling() -> None:
    for value in (math.nan, math.inf, -math.inf, -0.0):
        t = torch.tensor(value)
        assert printed(item(t), fmt("{:.2f}", item(t))) == expected(t.item(),
                                                                   f"{t.item():.2f}")


def test_tensor_arguments_of_logging_format_from_a_host_copy(logger) -> None:
    t = torch.tensor(2.5)
    counts = torch.tensor(7)
    with HostReads() as mode:
        deferred_log(logger.info, "a %.2f %d %s", t, counts, "x")
        deferred_log(logger.info, "b %(v).1e", {"v": t})
    assert mode.reads == [] and runtime.pending() == 2
    t.add_(1)
    deferred_log(logger.info, "c %s", t)  # tensor(...) text: logged at once, with what it has
    assert runtime.pending() == 0
    lines = [line.split(" - ")[-1] for line in logger.stream.getvalue().splitlines()]
    assert lines == ["a 2.50 7 x", "b 2.5e+00", "c tensor(3.5000)"]


def test_float_of_a_tensor_requiring_grad_warns_where_the_read_was() -> None:
    import subprocess

    for line, call in ((4, "item(w * 2, float)"), (4, 'percent_fmt("%.1f", w * 2)'),
                       (4, 'percent_fmt("%d %.1f", (1, w * 2))')):
        script = (
            "import torch\n"
            "from nosync_fix.runtime import deferred_print, item, percent_fmt\n"
            "w = torch.tensor(1.5, requires_grad=True)\n"
            f"deferred_print({call})\n"
            "deferred_print(item(w * 3, float))\n"
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env=env, timeout=120)
        assert done.stdout.splitlines()[1] == "4.5"
        warning = [text for text in done.stderr.splitlines() if "requires_grad=True" in text]
        assert len(warning) == 1
        assert warning[0].startswith(f"<string>:{line}: UserWarning: Converting"), call


@pytest.mark.parametrize("template,found", [
    ("step %d loss %.4f", {0: "d", 1: "f"}),
    ("%(loss).2f %(name)s", {"loss": "f", "name": "s"}),
    ("100%% done %5.1e", {0: "e"}),
    ("%-8s|%+.3g|% i", {0: "s", 1: "g", 2: "i"}),
    ("%*d", None),
])
def test_percent_conversions(template: str, found) -> None:
    from nosync_fix._percent import conversions

    assert conversions(template) == found


def test_importing_the_package_alone_loads_nothing() -> None:
    import subprocess

    code = ("import sys, nosync_fix.runtime as runtime\n"
            "assert 'torch' not in sys.modules and not hasattr(sys.stdout, 'wrapped')\n"
            "from nosync_fix.runtime import deferred_print\n"
            "assert 'torch' in sys.modules and hasattr(sys.stdout, 'wrapped')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)
