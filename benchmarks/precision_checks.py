"""Executed checks behind ``method=executed`` verdicts in precision_verdicts.csv.

Each check runs the before and after form of one rewrite pattern on representative values
(CPU tensors standing in for the device ones) and returns whether they agree exactly.

    python benchmarks/precision_checks.py
"""

from __future__ import annotations

import sys

import torch


def _losses(n: int = 2000, seed: int = 0) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return [torch.rand((), generator=generator) * 3 + 0.1 for _ in range(n)]


def sum_item_vs_double() -> bool:
    """`total += loss.item()` vs `total += loss.detach().double()` then `.item()`."""
    before, after = 0.0, 0
    for loss in _losses():
        before += loss.item()
        after += loss.detach().double()
    return before == after.item()


def sum_item_vs_float32() -> bool:
    """`total += loss.item()` vs `total += loss.detach()` (float32): expected to differ."""
    before, after = 0.0, 0
    for loss in _losses():
        before += loss.item()
        after += loss.detach()
    return before == after.item()


def count_item_vs_int64() -> bool:
    """`correct += pred.eq(t).sum().item()` vs `.sum().detach()` then `int()`."""
    generator = torch.Generator().manual_seed(1)
    before, after = 0, 0
    for _ in range(200):
        pred = torch.randint(0, 10, (64,), generator=generator)
        target = torch.randint(0, 10, (64,), generator=generator)
        before += pred.eq(target).sum().item()
        after += pred.eq(target).sum().detach()
    return before == int(after)


def format_float64_tensor() -> bool:
    """A float64 0-d tensor formats like the Python float with a format spec."""
    values = [t.double() for t in _losses(200)]
    return all(f"{v:.3f}|{v:.6f}|{v:5.2f}" == f"{v.item():.3f}|{v.item():.6f}|{v.item():5.2f}"
               for v in values)


def scaled_sum_item_vs_double() -> bool:
    """`total += avg.item() / steps` vs `total += avg.detach().double() / steps`, read back
    with `float(total)` before it is logged (diffusers' training scripts), over reset
    periods; float32 and bfloat16 losses, an int step count."""
    for dtype in (torch.float32, torch.bfloat16):
        for steps in (1, 3, 4):
            before_logged, after_logged = [], []
            before, after = 0.0, 0.0
            for i, loss in enumerate(_losses(600, seed=steps)):
                loss = loss.to(dtype)
                before += loss.item() / steps
                after += loss.detach().double() / steps
                if i % steps == steps - 1:
                    after = float(after)
                    before_logged.append(before)
                    after_logged.append(after)
                    before, after = 0.0, 0.0
            if before_logged != after_logged or not all(type(v) is float for v in after_logged):
                return False
    return True


def clamp_guarded_where() -> bool:
    """`if h.dtype == torch.float16 and (isinf(h).any() or isnan(h).any()): h = clamp(h)`
    vs the guard kept and `h = torch.where(isinf(h).any() | isnan(h).any(), clamp(h), h)`:
    values and gradients, float16 with and without inf/NaN, float32, empty and 0-dim."""
    def before(h: torch.Tensor) -> torch.Tensor:
        if h.dtype == torch.float16 and (torch.isinf(h).any() or torch.isnan(h).any()):
            bound = torch.finfo(h.dtype).max - 1000
            h = torch.clamp(h, min=-bound, max=bound)
        return h

    def after(h: torch.Tensor) -> torch.Tensor:
        if h.dtype == torch.float16:
            bound = torch.finfo(h.dtype).max - 1000
            h = torch.where(torch.isinf(h).any() | torch.isnan(h).any(),
                            torch.clamp(h, min=-bound, max=bound), h)
        return h

    generator = torch.Generator().manual_seed(2)
    base = torch.randn(4, 8, generator=generator) * 100
    inputs = [base.half(), base.float(), torch.empty(0, 8).half(), torch.tensor(3.0).half()]
    for bad in (float("inf"), float("-inf"), float("nan")):
        h = base.half().clone()
        h[1, 2] = bad
        inputs.append(h)
    for h in inputs:
        results = []
        for function in (before, after):
            x = h.detach().clone().requires_grad_(h.dtype.is_floating_point)
            out = function(x * 1)
            out.float().nan_to_num(0.0).sum().backward()
            results.append((out.detach(), x.grad))
        (a, ga), (b, gb) = results
        if a.dtype != b.dtype or a.shape != b.shape or not torch.equal(
                a.nan_to_num(), b.nan_to_num()) or not torch.equal(a.isnan(), b.isnan()):
            return False
        if not torch.equal(ga, gb):
            return False
    return True


def norm_clip_where() -> bool:
    """timm MARS: `if norm > 1.: c = c / norm` vs `c = torch.where(norm > 1., c / norm, c)`
    on norms below, at and above 1, zero, inf and NaN, in float32 and bfloat16."""
    generator = torch.Generator().manual_seed(3)
    cases = []
    for dtype in (torch.float32, torch.bfloat16):
        for scale in (0.0, 0.01, 1.0, 7.0):
            cases.append((torch.randn(16, 5, generator=generator) * scale).to(dtype))
        for bad in (float("inf"), float("nan")):
            c = torch.randn(16, 5, generator=generator).to(dtype)
            c[0, 0] = bad
            cases.append(c)
        cases.append(torch.ones(1, dtype=dtype))  # norm exactly 1
    for c in cases:
        norm = torch.norm(c)
        before = c
        if norm > 1.:
            before = c / norm
        after = torch.where(norm > 1., c / norm, c)
        if before.dtype != after.dtype or not torch.equal(before.nan_to_num(),
                                                          after.nan_to_num()):
            return False
        if not torch.equal(before.isnan(), after.isnan()):
            return False
    return True


def logging_call_in_graph_eager() -> bool:
    """NSY304 in eager mode: `logger.warning("...")` vs `call_in_graph(__name__,
    "logger.warning", "...")` (and `print`): the same records, caller fields included
    (file, line, function), and the same printed text."""
    import contextlib
    import io
    import logging
    import textwrap

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "src"))
    from nosync_fix import fix_code

    source = textwrap.dedent("""
        import logging

        import torch

        logger = logging.getLogger("precision_check")


        class Block(torch.nn.Module):
            def forward(self, x, scale=None):
                if scale is not None:
                    logger.warning("Passing `scale` is deprecated. `scale` will be ignored.")
                if x.ndim == 3:
                    logger.info("three dims")
                    print("flattening the batch")
                    x = x[0]
                return x * 2
    """)
    fixed = fix_code(source, filename="block.py", unsafe_fixes=True).fixed
    if "call_in_graph(" not in fixed:
        return False

    def records(code: str) -> tuple[list[tuple], str]:
        got: list[tuple] = []

        class Keep(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                got.append((record.getMessage(), record.levelname, record.name,
                            record.lineno, record.funcName, record.filename))

        logger = logging.getLogger("precision_check")
        logger.handlers[:] = [Keep()]
        logger.setLevel(logging.INFO)
        logger.propagate = False
        namespace = {"__name__": "precision_check_block"}
        sys.modules["precision_check_block"] = type(sys)("precision_check_block")
        exec(compile(code, "block.py", "exec"), namespace)
        sys.modules["precision_check_block"].__dict__.update(namespace)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            block = namespace["Block"]()
            block(torch.ones(2, 2), scale=1.0)
            block(torch.ones(1, 2, 2))
        return got, out.getvalue()

    def calls(code: str, marks: tuple[str, ...]) -> list[int]:
        """Line numbers of the output calls in ``code``, in order."""
        return [i for i, line in enumerate(code.splitlines(), 1)
                if line.strip().startswith(marks)]

    def placed(found: tuple[list[tuple], str], lines: list[int]) -> tuple[list[tuple], str]:
        # a record's line is the line of its own call in its own file: compare which call
        return [r[:3] + (lines.index(r[3]),) + r[4:] for r in found[0]], found[1]

    before = placed(records(source), calls(source, ("logger.", "print(")))
    after = placed(records(fixed), calls(fixed, ("call_in_graph(",)))
    return before == after and len(before[0]) == 2 and before[1] == "flattening the batch\n"


CHECKS = {f.__name__: f for f in (sum_item_vs_double, sum_item_vs_float32,
                                  count_item_vs_int64, format_float64_tensor,
                                  scaled_sum_item_vs_double, clamp_guarded_where,
                                  norm_clip_where, logging_call_in_graph_eager)}


def main() -> int:
    for name, check in CHECKS.items():
        print(f"{name}: {'same' if check() else 'DIFFERENT'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
