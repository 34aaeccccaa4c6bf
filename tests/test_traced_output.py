"""Output inside compiled code: ``call_in_graph`` and deferred prints recorded by compiled code.

Checks that the calls become part of the graph (no break), that repeated calls of the
compiled code do not recompile, and that what the user sees — printed text, log records
with their caller, warnings with their location and once-only filtering — is the
original's in eager mode and, where the fix is safe, in compiled mode too.
"""

from __future__ import annotations

import functools
import logging
import sys
import warnings

import pytest
import torch

from nosync_fix.runtime import call_in_graph, deferred_print, flush, fmt, item

#: Compiles with torch.compile / torch._dynamo: `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

logger = logging.getLogger("test_traced_output")


class OnceLogger(logging.Logger):
    """A logger with transformers' ``warning_once``: an lru_cached wrapper of ``warning``."""

    @functools.lru_cache(None)  # noqa: B019  (as transformers defines it)
    def warning_once(self, *args, **kwargs) -> None:
        self.warning(*args, **kwargs)


once_logger = OnceLogger("test_traced_output.once")


class Counter:
    """A backend that counts the graphs it is given (one per compiled frame)."""

    def __init__(self) -> None:
        self.graphs = 0

    def __call__(self, gm, example_inputs):  # type: ignore[no-untyped-def]
        self.graphs += 1
        return gm


@pytest.fixture
def records():
    """The records of both loggers, with the caller fields."""
    caught: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            caught.append(record)

    handler = Keep()
    for each in (logger, once_logger):
        each.addHandler(handler)
        each.setLevel(logging.INFO)
        each.propagate = False
    yield caught
    for each in (logger, once_logger):
        each.removeHandler(handler)


def _fields(records: list[logging.LogRecord]) -> list[tuple[object, ...]]:
    return [(r.name, r.levelname, r.getMessage(), r.filename, r.lineno, r.funcName)
            for r in records]


# -- eager mode: exactly the original call -----------------------------------------------------


def _original_log() -> None:
    logger.warning("w %d", 1)
    logger.info("i")


def _rewritten_log() -> None:
    call_in_graph(__name__, "logger.warning", "w %d", 1)
    call_in_graph(__name__, "logger.info", "i")


def test_eager_logging_keeps_the_caller(records) -> None:
    _original_log()
    original = _fields(records)
    records.clear()
    _rewritten_log()
    rewritten = _fields(records)
    # Same text and function; the line is each function's own.
    assert [f[:4] + f[5:] for f in rewritten] == [
        f[:4] + ("_rewritten_log",) for f in original]
    assert all(r[3] == "test_traced_output.py" for r in rewritten)
    assert rewritten[0][4] == _rewritten_log.__code__.co_firstlineno + 1


def test_eager_warning_once_is_the_original(records) -> None:
    for _ in range(3):
        call_in_graph(__name__, "once_logger.warning_once", "once only")
    rewritten = _fields(records)
    records.clear()
    once_logger.warning_once.cache_clear()
    for _ in range(3):
        once_logger.warning_once("once only")
    assert _fields(records) == rewritten
    assert len(rewritten) == 1 and rewritten[0][5] == "warning_once"


def test_eager_warnings_keep_location_and_once_only() -> None:
    def rewritten() -> None:
        for _ in range(3):
            call_in_graph(__name__, "warnings.warn", "careful", UserWarning)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        rewritten()
    assert len(caught) == 1
    assert caught[0].filename == __file__
    assert caught[0].lineno == rewritten.__code__.co_firstlineno + 2
    assert str(caught[0].message) == "careful" and caught[0].category is UserWarning


def test_eager_print(capsys) -> None:
    call_in_graph(__name__, "print", "a", 1, 2.5, None, True, sep="|", end="!\n")
    assert capsys.readouterr().out == "a|1|2.5|None|True!\n"


def test_non_constant_arguments_are_the_original_call(capsys) -> None:
    call_in_graph(__name__, "print", "t", torch.tensor([1, 2]))
    assert capsys.readouterr().out == f"t {torch.tensor([1, 2])}\n"


# -- compiled mode -----------------------------------------------------------------------------


class Inner(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        call_in_graph(__name__, "once_logger.warning_once", "inner once")
        call_in_graph(__name__, "print", "inner", 2, sep="-")
        return x * 2


class Outer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Inner()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        call_in_graph(__name__, "print", "outer")
        return self.inner(x) + 1


def test_calls_in_graph_break_nothing_and_keep_order(capsys, records) -> None:
    torch._dynamo.reset()
    model = Outer()
    x = torch.ones(3)
    once_logger.warning_once.cache_clear()
    expected_out = model(x)
    eager_text, eager_records = capsys.readouterr().out, _fields(records)
    explanation = torch._dynamo.explain(model)(x)
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1
    capsys.readouterr()
    records.clear()
    once_logger.warning_once.cache_clear()
    counter = Counter()
    compiled = torch.compile(model, backend=counter)
    for _ in range(20):
        assert torch.equal(compiled(x), expected_out)
    assert counter.graphs == 1  # one frame compiled, no recompile over 20 calls
    assert capsys.readouterr().out == eager_text * 20
    assert _fields(records) == eager_records  # warning_once: once, the same record


@pytest.mark.parametrize("backend", ["aot_eager"])
def test_calls_in_graph_with_grad(backend: str, capsys) -> None:
    torch._dynamo.reset()
    weight = torch.ones(3, requires_grad=True)

    def step(x: torch.Tensor) -> torch.Tensor:
        call_in_graph(__name__, "print", "step")
        return (x * weight).sum()

    compiled = torch.compile(step, backend=backend)
    for _ in range(3):
        compiled(torch.ones(3)).backward()
    assert capsys.readouterr().out == "step\n" * 3
    assert torch.equal(weight.grad, torch.full((3,), 3.0))


def _deferred_step(x: torch.Tensor, step: int) -> torch.Tensor:
    loss = (x * 2).sum()
    deferred_print(fmt("step {} loss {:.4f}", step, item(loss)), round(item(loss) * 3, 1))
    return loss + 1


def test_deferred_print_in_compiled_code_does_not_recompile(capsys) -> None:
    torch._dynamo.reset()
    for step in range(25):
        _deferred_step(torch.ones(3) * step, step)
    flush()
    eager = capsys.readouterr().out
    counter = Counter()
    compiled = torch.compile(_deferred_step, backend=counter)
    for step in range(25):
        compiled(torch.ones(3) * step, step)  # no flush in between
    flush()
    assert capsys.readouterr().out == eager
    # The int argument makes Dynamo compile once more with a symbolic step (as it does
    # for any function of an int); the pending records make it compile no more.
    assert counter.graphs == 2
    torch._dynamo.reset()
    counter = Counter()
    compiled = torch.compile(functools.partial(_deferred_step, step=7), backend=counter)
    for step in range(25):
        compiled(torch.ones(3) * step)
    flush()
    assert counter.graphs == 1
    assert capsys.readouterr().out.count("step 7 loss") == 25


def test_the_runtime_is_importable_without_compiling() -> None:
    assert "nosync_fix.runtime._traced" in sys.modules


# -- the rule's rewrite, compiled before and after ------------------------------------------

_MODEL = '''
import functools
import logging
import warnings

import torch


class OnceLogger(logging.Logger):
    @functools.lru_cache(None)
    def warning_once(self, *args, **kwargs):
        self.warning(*args, **kwargs)


logging.setLoggerClass(OnceLogger)
logger = logging.getLogger("test_traced_output.model")
logging.setLoggerClass(logging.Logger)


def check(x):
    print("checking", 2, sep=": ")
    return x


class Inner(torch.nn.Module):
    def forward(self, x):
        logger.warning_once("`use_cache=True` is incompatible; setting `use_cache=False`")
        return check(x).relu()


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.inner = Inner()

    def forward(self, x):
        print("model forward")
        warnings.warn("deprecated argument", FutureWarning)
        return self.inner(self.linear(x)) * 2
'''


def _load(source: str, name: str):  # type: ignore[no-untyped-def]
    import types

    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def _run(module, model, x, calls: int, capsys):  # type: ignore[no-untyped-def]
    """Outputs, stdout, records and warnings of ``calls`` calls."""
    caught: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            caught.append(record)

    handler = Keep()
    module.logger.addHandler(handler)
    module.logger.propagate = False
    type(module.logger).warning_once.cache_clear()
    capsys.readouterr()
    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            outputs = [model(x) for _ in range(calls)]
    finally:
        module.logger.removeHandler(handler)
    flush()
    return (outputs, capsys.readouterr().out,
            [(r.getMessage(), r.filename, r.lineno, r.funcName) for r in caught],
            [(str(w.message), w.category) for w in warned])


def test_the_fix_removes_the_breaks_and_keeps_the_output(capsys) -> None:
    from nosync_fix import fix_code
    from nosync_fix.config import Settings

    # line_length=0: nothing split, so the records' line numbers can be compared.
    result = fix_code(_MODEL, select=["NSY304"], unsafe_fixes=True,
                      settings=Settings(line_length=0))
    assert result.fixed.count("call_in_graph(__name__") == 4
    before = _load(_MODEL, "nosync_traced_before")
    after = _load(result.fixed, "nosync_traced_after")
    torch.manual_seed(0)
    model_before = before.Model()
    model_after = after.Model()
    model_after.load_state_dict(model_before.state_dict(), strict=True)
    x = torch.randn(3, 4)

    torch._dynamo.reset()
    explained = torch._dynamo.explain(model_before)(x)
    assert explained.graph_break_count > 0
    torch._dynamo.reset()
    explained = torch._dynamo.explain(model_after)(x)
    assert explained.graph_break_count == 0 and explained.graph_count == 1

    eager_before = _run(before, model_before, x, 3, capsys)
    eager_after = _run(after, model_after, x, 3, capsys)
    for a, b in zip(eager_before[0], eager_after[0], strict=True):
        assert torch.equal(a, b)
    assert eager_after[1:] == eager_before[1:]  # text, records (with caller), warnings
    assert eager_before[1] == "model forward\nchecking: 2\n" * 3

    torch._dynamo.reset()
    counter = Counter()
    compiled = torch.compile(model_after, backend=counter)
    compiled_after = _run(after, compiled, x, 20, capsys)
    assert counter.graphs == 1  # one frame, no recompile over 20 calls
    for out in compiled_after[0]:
        assert torch.equal(out, eager_before[0][0])
    # Safe parts, identical under torch.compile: the printed text and warning_once's record.
    assert compiled_after[1] == "model forward\nchecking: 2\n" * 20
    assert compiled_after[2] == eager_before[2]
    # warnings.warn (unsafe): the same text and category, each call.
    assert compiled_after[3] == [("deprecated argument", FutureWarning)] * 20


_PADDER = '''
import functools
import logging

import torch


class OnceLogger(logging.Logger):
    @functools.lru_cache(None)
    def warning_once(self, *args, **kwargs):
        self.warning(*args, **kwargs)


logging.setLoggerClass(OnceLogger)
logger = logging.getLogger("test_traced_output.padder")
logging.setLoggerClass(logging.Logger)


class Padder(torch.nn.Module):
    def __init__(self, window: int):
        super().__init__()
        self.window = window
        self.linear = torch.nn.Linear(4, 4)

    def _pad(self, x: torch.Tensor):
        window = self.window if isinstance(self.window, int) else max(self.window)
        batch, seq_len = x.shape[:2]
        padding = (window - seq_len % window) % window
        if padding > 0:
            logger.warning_once(
                f"{self.__class__.__name__}: input ids are automatically padded to a multiple "
                f"of `attention_window`: {window}"
            )
            print(f"{type(self).__name__}: padded {seq_len} by {padding:>3} to {seq_len + padding}")
            x = torch.nn.functional.pad(x, (0, 0, 0, padding))
        return x

    def forward(self, x: torch.Tensor):
        return self.linear(self._pad(x)).relu()
'''


def test_fields_of_host_values_are_formatted_in_the_graph(capsys) -> None:
    """Longformer's padding warning: an f-string whose fields are host numbers and the
    class's name (``self.__class__.__name__``, ``type(self).__name__``)."""
    from nosync_fix import fix_code

    result = fix_code(_PADDER, select=["NSY304"], unsafe_fixes=True)
    assert result.fixed.count("call_in_graph(") == 2
    before = _load(_PADDER, "nosync_padder_before")
    after = _load(result.fixed, "nosync_padder_after")
    torch.manual_seed(0)
    model_before, model_after = before.Padder(4), after.Padder(4)
    model_after.load_state_dict(model_before.state_dict(), strict=True)
    inputs = [torch.randn(2, n, 4) for n in (14, 14, 13, 16, 14)]

    torch._dynamo.reset()
    assert torch._dynamo.explain(model_before)(inputs[0]).graph_break_count > 0
    torch._dynamo.reset()
    explained = torch._dynamo.explain(model_after)(inputs[0])
    assert explained.graph_break_count == 0 and explained.graph_count == 1

    def run(module, model, calls):  # type: ignore[no-untyped-def]
        outs, text, records = [], [], []
        for x in calls:
            got = _run(module, model, x, 1, capsys)
            outs += got[0]
            text.append(got[1])
            records += [message for message, *_ in got[2]]
        return outs, text, records

    eager = run(before, model_before, inputs)
    assert eager[1][0] == "Padder: padded 14 by   2 to 16\n" and eager[1][3] == ""
    assert run(after, model_after, inputs)[1:] == eager[1:]

    counts = []
    for module, model in ((before, model_before), (after, model_after)):
        torch._dynamo.reset()
        counter = Counter()
        compiled = run(module, torch.compile(model, backend=counter), inputs)
        for got, want in zip(compiled[0], eager[0], strict=True):
            assert torch.equal(got, want)
        # The same text and the same warning_once records, for each length.
        assert compiled[1:] == eager[1:]
        graphs = counter.graphs
        repeated = run(module, torch.compile(model, backend=counter), [inputs[0]] * 20)
        assert repeated[1] == [eager[1][0]] * 20
        assert counter.graphs == graphs  # no recompile over 20 calls
        counts.append(graphs)
    # One graph per length (the text is specialized on it, as the original's was), where
    # the original split each into several.
    assert counts == [counts[0], 3] and counts[0] > 3


_LOCAL_IMPORT = '''
import torch


class Expert(torch.nn.Module):
    def forward(self, x):
        if self.training:
            import warnings as w

            w.warn("use_cache=True is ignored in training")
        return x * 2
'''


def test_a_name_bound_inside_forward_is_not_rewritten() -> None:
    # `call_in_graph(__name__, "w.warn", ...)` would look `w` up in the module's globals,
    # which have none: lerobot's `import logging` inside a forward failed so when fixed.
    from nosync_fix import check_code, fix_code

    result = fix_code(_LOCAL_IMPORT, select=["NSY304"], unsafe_fixes=True)
    assert result.fixed == _LOCAL_IMPORT
    (finding,) = check_code(_LOCAL_IMPORT, select=["NSY304"])
    assert finding.fix is None and "`w` is bound inside the function" in finding.message
    module = _load(result.fixed, "nosync_traced_local_import")
    with pytest.warns(UserWarning, match="use_cache=True is ignored"):
        assert torch.equal(module.Expert()(torch.ones(2)), torch.full((2,), 2.0))
