"""Generated programs: NSY101's rewrites of random branch structures keep their results.

Hypothesis writes functions whose bodies mix assignments, tuple assignments and
`if` / `elif` / `else` chains on device tests (nested, with several names, names read
after others change), runs the fixer with unsafe fixes, and executes the original and
the rewritten function on generated tensors: every returned tensor must be identical.
This exercises what the hand-written templates cannot enumerate: the order in which
names are selected, hoisted tests, nested selections and the read-order rules that
decide when one `torch.where` per name is not enough.
"""

from __future__ import annotations

import pytest

from nosync_fix import fix_code

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

NAMES = ("a", "b", "c")

names = st.sampled_from(NAMES)
constants = st.sampled_from(["0.5", "2", "1.5", "-1"])


@st.composite
def expressions(draw) -> str:
    kind = draw(st.integers(0, 4))
    x, y = draw(names), draw(names)
    if kind == 0:
        return x
    if kind == 1:
        return f"{x} {draw(st.sampled_from(['+', '-', '*']))} {draw(constants)}"
    if kind == 2:
        return f"{x} {draw(st.sampled_from(['+', '-']))} {y}"
    if kind == 3:
        return f"-{x}"
    return f"torch.clamp({x}, -1.0, 1.0)"


@st.composite
def conditions(draw) -> str:
    x = draw(names)
    forms = [f"{x}.sum() > t", f"{x}.max().item() > t", f"({x} > t).any()",
             f"not {x}.mean() > t", f"{x}.min() < -t"]
    first = draw(st.sampled_from(forms))
    if draw(st.booleans()):
        return first
    return f"{first} {draw(st.sampled_from(['and', 'or']))} {draw(st.sampled_from(forms))}"


@st.composite
def blocks(draw, depth: int) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 3 if depth > 0 else 1))
        if kind == 0:
            lines.append(f"{draw(names)} = {draw(expressions())}")
        elif kind == 1:
            first, second = draw(st.lists(names, min_size=2, max_size=2, unique=True))
            lines.append(f"{first}, {second} = {draw(expressions())}, {draw(expressions())}")
        else:
            lines += draw(chains(depth - 1))
    return lines


@st.composite
def chains(draw, depth: int) -> list[str]:
    lines = [f"if {draw(conditions())}:"] + ["    " + line for line in draw(blocks(depth))]
    for _ in range(draw(st.integers(0, 2))):
        lines += [f"elif {draw(conditions())}:"] + ["    " + line for line in draw(blocks(depth))]
    if draw(st.booleans()):
        lines += ["else:"] + ["    " + line for line in draw(blocks(depth))]
    return lines


@st.composite
def programs(draw) -> str:
    body = draw(chains(2))
    if draw(st.booleans()):
        body += draw(chains(1))
    return ("import torch\n\n\n"
            "def f(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, t: float):\n"
            + "".join(f"    {line}\n" for line in body)
            + "    return a, b, c\n")


inputs = st.tuples(
    *[st.lists(st.floats(-4, 4, width=32), min_size=3, max_size=3) for _ in NAMES],
    st.floats(-3, 3, width=32),
)


def _function(code: str):
    namespace: dict = {}
    exec(compile(code, "<program>", "exec"), namespace)
    return namespace["f"]


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(program=programs(), samples=st.lists(inputs, min_size=4, max_size=4))
def test_generated_branches_keep_their_results(program: str, samples) -> None:
    result = fix_code(program, select=["NSY101"], unsafe_fixes=True, all_paths=True)
    assert result.error is None, result.error
    original, rewritten = _function(program), _function(result.fixed)
    for *values, t in samples:
        tensors = [torch.tensor(v) for v in values]
        before = original(*[x.clone() for x in tensors], t)
        after = rewritten(*[x.clone() for x in tensors], t)
        for old, new in zip(before, after, strict=True):
            assert new.dtype == old.dtype and new.shape == old.shape
            torch.testing.assert_close(new, old, rtol=0, atol=0, equal_nan=True,
                                       msg=f"{program}\n--- fixed ---\n{result.fixed}")
