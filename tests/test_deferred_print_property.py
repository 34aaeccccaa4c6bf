"""NSY301 and NSY302 on generated prints and log calls: the fixer's output, run, prints
exactly what the original printed, and the rewritten function compiles without a graph break."""

from __future__ import annotations

import contextlib
import io
import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nosync_fix import fix_code

torch = pytest.importorskip("torch")
runtime = pytest.importorskip("nosync_fix.runtime")

SPECS = st.sampled_from(["", ".4f", ".2e", "g", ">10.3f", "+.1%", ",.2f", "08.3f", ".3g"])
#: Pieces of an f-string: device reads, arithmetic on them, tensors, host values.
FSTRING_FIELDS = st.one_of(
    SPECS.map(lambda s: "{loss.item()" + (":" + s if s else "") + "}"),
    SPECS.map(lambda s: "{loss.item() * 100" + (":" + s if s else "") + "}"),
    SPECS.map(lambda s: "{loss" + (":" + s if s else "") + "}"),
    st.just("{-loss.item()}"),
    st.just("{round(loss.item(), 3)}"),
    st.just("{abs(loss.item()) / (step + 1):.5f}"),
    st.just("{float(loss)!r}"),
    st.just("{step:>4d}"),
    st.just("{history}"),
    st.just("{{literal}}"),
)
TEXT = st.text(alphabet="abc :|=%\t", max_size=6)


@st.composite
def print_calls(draw) -> str:
    form = draw(st.sampled_from(["fstring", "format", "percent", "args"]))
    if form == "fstring":
        parts = draw(st.lists(st.tuples(TEXT, FSTRING_FIELDS), min_size=1, max_size=4))
        body = "".join(text.replace("%", "%%") + field for text, field in parts)
        call = f'print(f"{body}")'
    elif form == "format":
        specs = draw(st.lists(SPECS, min_size=1, max_size=3))
        template = " ".join("{" + (":" + s if s else "") + "}" for s in specs)
        args = ", ".join(draw(st.sampled_from(["loss.item()", "loss", "step",
                                               "loss.item() - step"])) for _ in specs)
        call = f'print("{template}".format({args}))'
    elif form == "percent":
        chosen = draw(st.lists(st.sampled_from([("%.3f", "loss.item()"), ("%d", "step"),
                                                ("%.2e", "loss"), ("%s", "loss.item()"),
                                                ("%5.1f", "loss.item() * 2")]),
                               min_size=1, max_size=3))
        template = " ".join(spec for spec, _ in chosen)
        call = f'print("{template}" % ({", ".join(arg for _, arg in chosen)},))'
    else:
        args = draw(st.lists(st.sampled_from(["loss.item()", "step", "'x'",
                                              "loss.tolist()", "int(loss)", "history"]),
                             min_size=1, max_size=4))
        keywords = draw(st.sampled_from(["", ", sep=''", ", sep=' | '", ", end='!\\n'"]))
        call = f"print({', '.join(args)}{keywords})"
    return call


def _script(call: str) -> str:
    return (
        "import torch\n\n\n"
        "def run(values):\n"
        "    history = []\n"
        "    for step, value in enumerate(values):\n"
        # torch.as_tensor: a tensor whose device the analysis does not know (one that
        # `torch.tensor(value)` makes is host memory for it, and printing it no read).
        "        loss = torch.as_tensor(value) * 2\n"
        f"        {call}\n"
        "        history.append(step)\n"
    )


def _output(source: str, values: list[float]) -> str:
    namespace: dict = {}
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(source, "<generated>", "exec"), namespace)
        namespace["run"](values)
        runtime.flush()
    return buffer.getvalue()


VALUES = st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), min_size=1,
                  max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call=print_calls(), values=VALUES)
def test_fixed_prints_print_the_same_text(call: str, values: list[float]) -> None:
    source = _script(call)
    fixed = fix_code(source, select=["NSY301"])
    assert fixed.error is None
    reads_device = "loss" in call
    assert ("deferred_print(" in fixed.fixed) == reads_device, (
        call, [f.message for f in fixed.findings])
    if not reads_device:
        return
    try:
        want = _output(source, values)
    except (ValueError, OverflowError, TypeError, ZeroDivisionError) as error:
        with pytest.raises(type(error)):
            _output(fixed.fixed, values)
        runtime.flush()
        return
    assert _output(fixed.fixed, values) == want, fixed.fixed


LOG_CALLS = st.sampled_from([
    'logger.info("step %d loss %.4f", step, loss.item())',
    'logger.info("loss %.3e", loss)',
    'logger.warning(f"loss {loss.item():.2f} {loss.item() * 2:.1f} {step}")',
    'logger.log(logging.ERROR, "%(loss).3f|%(step)s", {"loss": loss.item(), "step": step})',
    'logger.debug("{:.4f}".format(loss.item()))',
    'logging.info("root %.2f", loss.item())',
])


@settings(max_examples=40, deadline=None)
@given(call=LOG_CALLS, values=VALUES)
def test_fixed_log_calls_log_the_same_records(call: str, values: list[float]) -> None:
    source = "import logging\n" + _script(call).replace(
        "def run(values):\n",
        "logger = logging.getLogger('generated')\n\n\ndef run(values):\n")
    fixed = fix_code(source, select=["NSY302"])
    assert fixed.error is None and "deferred_log(" in fixed.fixed
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(funcName)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        outputs = []
        for text in (source, fixed.fixed):
            _output(text, values)
            outputs.append(stream.getvalue())
            stream.seek(0)
            stream.truncate()
    finally:
        root.removeHandler(handler)
        root.setLevel(logging.WARNING)
    assert outputs[1] == outputs[0]


@pytest.mark.slow
def test_a_rewritten_print_removes_the_graph_break(tmp_path) -> None:
    source = (
        "import torch\n\n\n"
        "def step(weights, target):\n"
        "    loss = ((weights - target) ** 2).sum()\n"
        '    print(f"loss {loss.item():.4f} ({loss.item() * 100:.1f}%)")\n'
        '    print("loss %.3f" % loss, loss.tolist())\n'
        "    return loss * 2\n"
    )
    fixed = fix_code(source, select=["NSY301"], all_paths=True)
    assert fixed.fixed.count("deferred_print(") == 2
    breaks = []
    for name, text in (("original", source), ("fixed", fixed.fixed)):
        path = tmp_path / f"{name}.py"  # Dynamo does not trace code from "<string>" files
        path.write_text(text)
        namespace: dict = {}
        exec(compile(text, str(path), "exec"), namespace)
        with contextlib.redirect_stdout(io.StringIO()):
            explanation = torch._dynamo.explain(namespace["step"])(torch.ones(3),
                                                                   torch.zeros(3))
            runtime.flush()
        # graph_break_count misses a break right after the first graph; the reasons do not.
        breaks.append(len(explanation.break_reasons) + explanation.graph_break_count)
    assert breaks[0] > 0 and breaks[1] == 0, [r.reason for r in explanation.break_reasons]
