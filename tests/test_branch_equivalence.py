"""NSY101 / NSY102 rewrites compute what the original branches computed.

Each template is a function with a branch on a device value. The fixer rewrites it
(unsafe fixes on: they are meant for the inputs users normally have), then hypothesis
runs the original and the rewritten function on the same generated tensors and
thresholds, and the results must be identical: values (bit for bit, NaN where NaN),
dtypes and shapes. Thresholds are float32 numbers: comparing a float32 tensor with a
threshold that float32 cannot represent is the documented edge where dropping `.item()`
changes the answer. Every template must take both paths during the run.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, replace

import pytest

from nosync_fix import fix_code

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@dataclass(frozen=True)
class Template:
    name: str
    code: str
    #: The call that must appear in the rewritten code.
    expect: str
    #: A Python expression over x, t (and y) saying which path the original takes.
    probe: str
    #: "float" or "int": the dtype of the generated x.
    dtype: str = "float"
    #: The fix is expected to be safe (applied without --unsafe-fixes).
    safe: bool = False


def _template(name: str, code: str, expect: str, probe: str, **kwargs) -> Template:
    source = "import torch\n\n\n" + textwrap.dedent(code).strip() + "\n"
    return Template(name, source, expect, probe, **kwargs)


TEMPLATES = [
    _template("scale_on_max", """
        def f(x: torch.Tensor, t: float):
            if x.abs().max() > t:
                x = x * 0.5
            return x
    """, "torch.where", "bool(x.abs().max() > t)"),
    _template("safe_local_float", """
        def f(x: torch.Tensor, t: float):
            y = x.float()
            if y.abs().max() > 4.0:
                y = y * 0.5
            return y
    """, "torch.where", "bool(x.abs().max() > 4.0)", safe=True),
    _template("item_if_else", """
        def f(x: torch.Tensor, t: float):
            if x.sum().item() > t:
                y = x * 2
            else:
                y = x - 1
            return y
    """, "torch.where", "x.sum().item() > t"),
    _template("elif_chain", """
        def f(x: torch.Tensor, t: float):
            if x.mean() > t:
                y = x * 2
            elif x.mean() < -t:
                y = -x
            else:
                y = x + 1
            return y
    """, "torch.where", "bool(x.mean() > t) or bool(x.mean() < -t)"),
    _template("several_names", """
        def f(x: torch.Tensor, t: float):
            y = x + 0
            if x.sum() > t:
                x = x * 2
                y = y + 1
            elif x.max() < t:
                x = -x
            else:
                y = y * 3
            return x, y
    """, "torch.where", "bool(x.sum() > t)"),
    _template("test_reads_assigned_name", """
        def f(x: torch.Tensor, t: float):
            y = x * 0
            if x.sum() > t:
                x = x - 10
                y = y + 1
            return x, y
    """, "torch.where", "bool(x.sum() > t)"),
    _template("boolean_ops", """
        def f(x: torch.Tensor, t: float):
            if x.sum() > t and not x.min() < -t:
                x = x * 3
            if x.max() > t or x.min() < t - 1:
                x = x - 1
            return x
    """, "torch.where", "bool(x.sum() > t) and not bool(x.min() < -t)"),
    _template("any_threshold", """
        def f(x: torch.Tensor, t: float):
            if (x > t).any():
                x = x - 2
            return x
    """, "torch.where", "bool((x > t).any())"),
    _template("nan_guard", """
        def f(x: torch.Tensor, t: float):
            y = torch.log(x.abs() - t)
            if torch.isnan(y).any():
                y = torch.zeros_like(y)
            return y
    """, "torch.where", "bool(torch.isnan(torch.log(x.abs() - t)).any())"),
    _template("if_expression", """
        def f(x: torch.Tensor, t: float):
            return x * 2 if float(x.sum()) > t else x - 1
    """, "torch.where", "float(x.sum()) > t"),
    _template("nested", """
        def f(x: torch.Tensor, t: float):
            y = x * 1
            if x.sum() > t:
                if x.max() > t:
                    x = x * 2
                y = y + 1
            return x, y
    """, "torch.where", "bool(x.sum() > t)"),
    _template("tuple_targets", """
        def f(x: torch.Tensor, t: float):
            y = x + 1
            if x.norm() > t:
                x, y = x * 2, y - 1
            return x, y
    """, "torch.where", "bool(x.norm() > t)"),
    _template("walrus", """
        def f(x: torch.Tensor, t: float):
            if (m := x.max()) > t:
                x = x - m
            return x, m
    """, "torch.where", "bool(x.max() > t)"),
    _template("bool_and_int_reads", """
        def f(x: torch.Tensor, t: float):
            if bool((x > t).all()):
                x = x + 1
            if int(x.sum()) > 2:
                x = x * 2
            return x
    """, "torch.where", "bool((x > t).all())"),
    _template("host_elif", """
        def f(x: torch.Tensor, t: float):
            if x.sum() > t:
                x = x * 2
            elif t > 0:
                x = x * 3
            return x
    """, "torch.where", "bool(x.sum() > t)"),
    _template("integer_tensor", """
        def f(x: torch.Tensor, t: float):
            if x.sum() > t:
                x = x * 2 - 1
            return x
    """, "torch.where", "bool(x.sum() > t)", dtype="int"),
    _template("clip_norm", """
        def f(x: torch.Tensor, t: float):
            norm = x.norm()
            if norm > t:
                scale = t / norm
                x = x * scale
            return x
    """, "torch.cond", "bool(x.norm() > t)"),
    _template("returns", """
        def f(x: torch.Tensor, t: float):
            if x.sum().item() > t:
                return x / (x.abs().max() + 1)
            return x
    """, "torch.cond", "x.sum().item() > t"),
    _template("swap", """
        def f(x: torch.Tensor, t: float):
            y = x.flip(0) * 0.5
            if x.sum() > y.sum() + t:
                x, y = y, x
            return x, y
    """, "torch.cond", "bool(x.sum() > (x.flip(0) * 0.5).sum() + t)"),
    _template("dependent_statements", """
        def f(x: torch.Tensor, t: float):
            if x.mean() > t:
                x = x * 2
                x = x + x.max()
            return x
    """, "torch.cond", "bool(x.mean() > t)"),
]

_THRESHOLDS = st.floats(-6, 6, width=32)


def _inputs(dtype: str) -> st.SearchStrategy:
    if dtype == "int":
        return st.lists(st.integers(-20, 20), min_size=1, max_size=6).map(
            lambda v: torch.tensor(v, dtype=torch.long))
    return st.lists(st.floats(-8, 8, width=32), min_size=1, max_size=6).map(
        lambda v: torch.tensor(v, dtype=torch.float32))


def _load(code: str) -> dict:
    namespace: dict = {"__name__": "branch_template"}
    exec(compile(code, "<template>", "exec"), namespace)
    return namespace


def _assert_identical(before, after) -> None:
    if isinstance(before, torch.Tensor):
        assert isinstance(after, torch.Tensor)
        assert after.dtype == before.dtype, (before.dtype, after.dtype)
        assert after.shape == before.shape, (before.shape, after.shape)
        torch.testing.assert_close(after, before, rtol=0, atol=0, equal_nan=True)
    elif isinstance(before, tuple):
        assert isinstance(after, tuple) and len(after) == len(before)
        for b, a in zip(before, after, strict=True):
            _assert_identical(b, a)
    else:
        assert type(after) is type(before) and after == before


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_rewrite_computes_the_same(template: Template) -> None:
    code = template.code
    if template.expect == "torch.cond":  # NSY102 rewrites compiled code only
        code += "\n\ncompiled_f = torch.compile(f)\n"
        template = replace(template, code=code)
    result = fix_code(template.code, select=["NSY101", "NSY102"], unsafe_fixes=True,
                      all_paths=True)
    assert result.error is None, result.error
    assert template.expect in result.fixed, result.fixed
    assert not re.search(r"^\s*(if|elif) ", result.fixed, re.M), result.fixed
    original, rewritten = _load(template.code)["f"], _load(result.fixed)["f"]
    taken: set[bool] = set()

    @settings(max_examples=60, deadline=None, database=None)
    @given(x=_inputs(template.dtype), t=_THRESHOLDS)
    def check(x, t) -> None:
        taken.add(bool(eval(template.probe, {"torch": torch, "x": x, "t": t})))
        _assert_identical(original(x.clone(), t), rewritten(x.clone(), t))

    check()
    assert taken == {True, False}, f"only the {taken} path was exercised"


@pytest.mark.parametrize("template", [t for t in TEMPLATES if t.safe], ids=lambda t: t.name)
def test_safe_templates_are_fixed_without_unsafe_fixes(template: Template) -> None:
    result = fix_code(template.code, select=["NSY101"], all_paths=True)
    assert template.expect in result.fixed


@pytest.mark.parametrize("template", [t for t in TEMPLATES if not t.safe],
                         ids=lambda t: t.name)
def test_unsafe_templates_need_unsafe_fixes(template: Template) -> None:
    result = fix_code(template.code, select=["NSY101", "NSY102"], all_paths=True)
    assert template.expect not in result.fixed


def test_where_keeps_gradients() -> None:
    """On a path the original took, the gradient through torch.where is the original's."""
    template = next(t for t in TEMPLATES if t.name == "scale_on_max")
    fixed = fix_code(template.code, select=["NSY101"], unsafe_fixes=True, all_paths=True).fixed
    original, rewritten = _load(template.code)["f"], _load(fixed)["f"]
    for t in (-1.0, 100.0):
        grads = []
        for function in (original, rewritten):
            x = torch.tensor([1.0, -3.0, 2.0], requires_grad=True)
            function(x, t).sum().backward()
            grads.append(x.grad)
        torch.testing.assert_close(grads[1], grads[0], rtol=0, atol=0)
