"""What NSY101's `torch.where` rewrites cost when the code runs eagerly (issue 20).

    python benchmarks/where_eager_cost.py              # prints a Markdown table
    python benchmarks/where_eager_cost.py --rounds 30 --json out.json

An `if` on a device value computes its branch only when the test holds; the
`torch.where` that NSY101 writes computes every value on every call, and then selects
over the whole tensor. On an accelerator the removed sync pays for that; in eager mode
on the CPU (no sync to remove) it is pure extra work. This script measures that extra
work, the most the rewrite can cost eagerly, for each rewrite shape NSY101 produces:

- ``scale``: ``if x.abs().max() > 1.0: x = x * 0.5`` (one name, no ``else``);
- ``clamp-guarded``: a host conjunct kept as an ``if``, the device part selected inside
  (``if x.dtype == torch.float16 and (torch.isinf(x).any() or ...)``: clamp);
- ``elif-two-names``: an ``if``/``elif``/``else`` assigning two names (the tests hoisted
  into ``cond`` / ``cond_2``, nested ``torch.where``);
- ``if-expression``: ``y = x * 2 if x.sum() > 0 else x``.

Each is rewritten by the fixer itself (``fix_code(..., select=["NSY101"],
unsafe_fixes=True)``), on small (64 elements) and large (2**20 elements) inputs, with
the branch taken and not taken. Times are CPU time per call (``time.process_time_ns``),
one torch thread, the versions interleaved round by round; the control pair times the
original against a second copy of itself (its ratio shows the noise). Outputs are
compared before and after (``torch.equal``) on every input.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import torch  # noqa: E402

from nosync_fix import fix_code  # noqa: E402

SCALE = '''
import torch
import torch.nn as nn


class Scale(nn.Module):
    def forward(self, x: torch.Tensor):
        if x.abs().max() > 1.0:
            x = x * 0.5
        return x
'''

CLAMP_GUARDED = '''
import torch
import torch.nn as nn


class Clamp(nn.Module):
    def forward(self, x: torch.Tensor):
        if x.dtype == torch.float16 and (torch.isinf(x).any() or torch.isnan(x).any()):
            bound = torch.finfo(x.dtype).max - 1000
            x = torch.clamp(x, min=-bound, max=bound)
        return x
'''

ELIF_TWO_NAMES = '''
import torch
import torch.nn as nn


class Pick(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor):
        if x.mean() > 0:
            x = x * 2
            y = y + 1
        elif x.mean() < -1:
            x = -x
        else:
            y = y - 1
        return x, y
'''

IF_EXPRESSION = '''
import torch
import torch.nn as nn


class Double(nn.Module):
    def forward(self, x: torch.Tensor):
        y = x * 2 if x.sum() > 0 else x
        return y
'''


def _inputs(case: str, size: int, taken: bool) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(size)
    x = torch.rand(size, generator=generator)  # in [0, 1): |x| <= 1, sum > 0, mean > 0
    if case == "scale":
        return ((x * 4 if taken else x),)
    if case == "clamp-guarded":
        x = (x * 100).half()
        if taken:
            x[0] = float("inf")
        return (x,)
    if case == "elif-two-names":
        # taken: the first branch (mean > 0); not taken: the else branch (-1 <= mean <= 0)
        return ((x if taken else x - 1.0), torch.rand(size, generator=generator))
    if case == "if-expression":
        return ((x if taken else -x),)
    raise ValueError(case)


CASES: dict[str, str] = {
    "scale": SCALE,
    "clamp-guarded": CLAMP_GUARDED,
    "elif-two-names": ELIF_TWO_NAMES,
    "if-expression": IF_EXPRESSION,
}


def _load(source: str, name: str) -> Any:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    classes = [v for v in module.__dict__.values()
               if isinstance(v, type) and issubclass(v, torch.nn.Module) and v is not
               torch.nn.Module]
    return classes[0]()


def rewritten(source: str) -> str:
    result = fix_code(source, select=["NSY101"], unsafe_fixes=True)
    if result.error is not None or result.fixed == source:
        raise AssertionError(f"NSY101 did not rewrite:\n{source}")
    return result.fixed


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b))


def _cpu_ns(model: Any, args: tuple, calls: int) -> float:
    start = time.process_time_ns()
    for _ in range(calls):
        model(*args)
    return (time.process_time_ns() - start) / calls


def run_case(name: str, source: str, size: int, taken: bool, rounds: int) -> dict[str, Any]:
    after_source = rewritten(source)
    before, control, after = (_load(source, "before"), _load(source, "control"),
                              _load(after_source, "after"))
    args = _inputs(name, size, taken)
    if not _same(before(*args), after(*args)):
        raise AssertionError(f"{name}: outputs differ after the rewrite")
    calls = max(1, 20_000 // max(1, size // 64))
    times: dict[str, list[float]] = {"before": [], "after": [], "control": []}
    for model in (before, control, after):
        _cpu_ns(model, args, calls)  # warm-up
    for _ in range(rounds):  # interleaved: one batch of each per round
        for label, model in (("before", before), ("after", after), ("control", control)):
            times[label].append(_cpu_ns(model, args, calls))
    b, a, c = (statistics.median(times[k]) for k in ("before", "after", "control"))
    return {"case": name, "elements": size, "branch": "taken" if taken else "not taken",
            "before_us": b / 1e3, "after_us": a / 1e3, "ratio": a / b, "control_ratio": c / b,
            "calls_per_batch": calls, "rounds": rounds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--sizes", default="64,1048576")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args(argv)
    torch.set_num_threads(1)
    sizes = [int(s) for s in options.sizes.split(",")]
    rows = [run_case(name, source, size, taken, options.rounds)
            for name, source in CASES.items() for size in sizes for taken in (True, False)]
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"1 thread, CPU time per call (us), median of {options.rounds} interleaved rounds\n")
    print("| shape | elements | branch | before | after | ratio | control |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['case']} | {r['elements']} | {r['branch']} | {r['before_us']:.1f} "
              f"| {r['after_us']:.1f} | {r['ratio']:.2f}x | {r['control_ratio']:.2f}x |")
    if options.json:
        options.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
