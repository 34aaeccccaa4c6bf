"""What NSY102's `torch.cond` costs when the code runs eagerly (issue 20).

    python benchmarks/cond_eager_cost.py            # prints a Markdown table
    python benchmarks/cond_eager_cost.py --calls 50 --json out.json

torchtune's distillation losses (``ForwardKLLoss``: ``if torch.sum(mask) == 0: return
torch.tensor(0.0)``) went from ~3 ms to ~350 ms per eager forward and backward when
NSY102 rewrote the branch into ``torch.cond``. This script rewrites small examples of that
form with ``nosync-fix --select NSY102 --unsafe-fixes`` (the fixer's own output, not a
hand-written version) and times, on the same inputs:

- eager forward + backward, before and after (after: every call builds the branch
  closures again, and eager ``torch.cond`` traces them);
- the same under ``torch.compile`` (``aot_eager`` backend, no C++ toolchain needed), after
  a warm-up call: compiled code traces ``torch.cond`` once.

Outputs and gradients are compared before and after (``torch.testing.assert_close``).
Times are medians over ``--calls`` calls on this CPU, one torch thread.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import torch  # noqa: E402

from nosync_fix import fix_code  # noqa: E402

#: A distillation loss of the shape NSY102 met in torchtune's kd_losses.py (written here,
#: not copied): a masked mean over tokens that returns zero when no token is kept.
KL_LOSS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class DistillLoss(nn.Module):
    def __init__(self, ignore: int = -100):
        super().__init__()
        self.ignore = ignore

    def forward(self, student_logits, teacher_logits, labels):
        log_p = F.log_softmax(student_logits, dim=-1)
        q = F.softmax(teacher_logits, dim=-1)
        per_token = (q * log_p).sum(dim=-1).flatten()
        keep = (labels != self.ignore).flatten().float()
        if torch.sum(keep) == 0:
            return per_token.new_zeros(())
        return -(per_token * keep).sum() / keep.sum()


def make(seed):
    torch.manual_seed(seed)
    student = torch.randn(2, 16, 256, requires_grad=True)
    teacher = torch.randn(2, 16, 256)
    labels = torch.randint(0, 256, (2, 16))
    return DistillLoss(), (student, teacher, labels)
'''

#: NSY102's own docstring example: a norm clip.
CLIP = '''
import torch
import torch.nn as nn


class Clip(nn.Module):
    def __init__(self, max_norm: float = 1.0):
        super().__init__()
        self.max_norm = max_norm
        self.net = nn.Linear(64, 64)

    def forward(self, x: torch.Tensor):
        x = torch.tanh(x) * self.net.weight
        norm = x.norm()
        if norm > self.max_norm:
            scale = self.max_norm / norm
            x = x * scale
        return x


def make(seed):
    torch.manual_seed(seed)
    return Clip(1.0), (torch.randn(64, 64),)
'''

#: A masked mean, and by hand the same torch.cond with its branches built once, at module
#: level (operands passed, nothing closed over): does building them once avoid the cost?
MASKED_MEAN = '''
import torch
import torch.nn as nn


class MaskedMean(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor):
        total = mask.sum()
        if total == 0:
            return torch.zeros((), dtype=x.dtype)
        return (x * mask).sum() / total


def make(seed):
    torch.manual_seed(seed)
    return MaskedMean(), (torch.randn(512, requires_grad=True),
                          (torch.rand(512) > 0.5).float())
'''
MASKED_MEAN_HOISTED = '''
import torch
import torch.nn as nn


def _then(x, mask, total):
    return torch.zeros((), dtype=x.dtype)


def _else(x, mask, total):
    return (x * mask).sum() / total


class MaskedMean(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor):
        total = mask.sum()
        return torch.cond(total == 0, _then, _else, (x, mask, total))


def make(seed):
    torch.manual_seed(seed)
    return MaskedMean(), (torch.randn(512, requires_grad=True),
                          (torch.rand(512) > 0.5).float())
'''

#: name -> (source, the rewritten source; None: what NSY102 writes)
CASES: dict[str, tuple[str, str | None]] = {
    "distill-loss": (KL_LOSS, None),
    "clip-norm": (CLIP, None),
    "masked-mean": (MASKED_MEAN, None),
    "masked-mean, branches built once (by hand)": (MASKED_MEAN, MASKED_MEAN_HOISTED),
}


def _load(source: str, name: str) -> types.ModuleType:
    folder = Path(tempfile.mkdtemp(prefix="cond-cost-"))
    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module  # Dynamo imports the module of the code it traces
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


def _step(model: Any, args: tuple) -> tuple[torch.Tensor, list[torch.Tensor]]:
    args = tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor)
                 else a for a in args)
    model.zero_grad(set_to_none=True)
    out = model(*args)
    out.sum().backward()
    grads = [a.grad for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    grads += [p.grad for p in model.parameters() if p.grad is not None]
    return out.detach(), grads


def _time(function: Any, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def run_case(name: str, source: str, rewritten: str | None, calls: int) -> dict[str, Any]:
    if rewritten is None:
        # NSY102 rewrites only a class every instance of which its file compiles: the class
        # alone with a line that compiles it (lazily: nothing is compiled at import) gets
        # the fix the rule makes there; `make` (eager instances, for timing) comes back after.
        cls = re.search(r"^class (\w+)\(nn\.Module\)", source, re.M).group(1)  # type: ignore
        model_part, make_part = source.split("\n\ndef make(", 1)
        compile_line = f"\n\n_compiled = torch.compile({cls}())\n"
        fixed = fix_code(model_part + compile_line, select=["NSY102"], unsafe_fixes=True).fixed
        assert fixed != model_part + compile_line, f"{name}: NSY102 did not rewrite"
        rewritten = fixed.replace(compile_line, "\n") + "\n\ndef make(" + make_part
    module = re.sub(r"\W", "_", name)
    before, after = _load(source, f"{module}_before"), _load(rewritten, f"{module}_after")
    row: dict[str, Any] = {"case": name}
    model_b, args = before.make(0)
    model_a, _ = after.make(0)
    model_a.load_state_dict(model_b.state_dict(), strict=True)
    out_b, grads_b = _step(model_b, args)
    out_a, grads_a = _step(model_a, args)  # first eager call (Dynamo traces the branches)
    torch.testing.assert_close(out_a, out_b)
    for g_a, g_b in zip(grads_a, grads_b, strict=True):
        torch.testing.assert_close(g_a, g_b)
    row["eager_before_ms"] = _time(lambda: _step(model_b, args), calls)
    row["eager_after_ms"] = _time(lambda: _step(model_a, args), calls)
    for label, model in (("before", model_b), ("after", model_a)):
        torch._dynamo.reset()
        compiled = torch.compile(model, backend="aot_eager")
        _step(compiled, args)  # warm-up: compile
        row[f"compiled_{label}_ms"] = _time(lambda c=compiled: _step(c, args), calls)
    torch._dynamo.reset()
    row["eager_ratio"] = row["eager_after_ms"] / row["eager_before_ms"]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = [run_case(name, source, rewritten, options.calls)
            for name, (source, rewritten) in CASES.items()]
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"1 thread, median of {options.calls} calls, forward + backward (ms)\n")
    print("| case | eager before | eager after | eager ratio | aot_eager before "
          "| aot_eager after |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['case']} | {r['eager_before_ms']:.3f} | {r['eager_after_ms']:.3f} "
              f"| {r['eager_ratio']:.1f}x | {r['compiled_before_ms']:.3f} "
              f"| {r['compiled_after_ms']:.3f} |")
    if options.json:
        options.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
