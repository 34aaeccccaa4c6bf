"""Guards of model code, rewritten, compile with fewer graph breaks, no recompiles, and the
same bits as the original, eager and compiled (aot_eager, tiny modules).

- BART's float16 guard (``h.dtype == torch.float16 and (isinf(h).any() or isnan(h).any())``):
  the dtype test stays an ``if``, the device test becomes a ``torch.where`` (NSY101).
- A validation guard (``if (x < 0).any(): raise ValueError(msg)``) is reported by NSY401
  without a fix (issue 20: the exception and the line it stops at are the program's logic).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

import pytest

from nosync_fix import fix_code

torch = pytest.importorskip("torch")

from compile_support import GraphCounter, graph_breaks, namespace  # noqa: E402

#: Compiles with torch.compile / torch._dynamo: `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

BART_GUARD = textwrap.dedent("""
    import torch
    from torch import nn


    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
            hidden_states = self.fc(hidden_states) * 4000
            if hidden_states.dtype == torch.float16 and (
                torch.isinf(hidden_states).any() or torch.isnan(hidden_states).any()
            ):
                clamp_value = torch.finfo(hidden_states.dtype).max - 1000
                hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
            return hidden_states + 1
""")


def _graphs_over_calls(fn: Callable, inputs: list) -> tuple[int, list]:  # type: ignore[no-untyped-def]
    torch._dynamo.reset()
    counter = GraphCounter()
    compiled = torch.compile(fn, backend=counter)
    outputs = [compiled(*args) for args in inputs]
    return counter.graphs, outputs


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(
        a.view(torch.int16) if a.dtype == torch.float16 else a,
        b.view(torch.int16) if b.dtype == torch.float16 else b)


def _flat(code: str) -> str:
    """``code`` with the calls the fixer split over lines (to stay within the line
    length) joined again, to look for an expression in it."""
    code = re.sub(r"\(\s+", "(", code)
    code = re.sub(r",?\s+\)", ")", code)
    return re.sub(r"\s*\n\s*", " ", code)


def test_bart_float16_guard() -> None:
    fixed = fix_code(BART_GUARD, select=["NSY101"], all_paths=True)
    assert fixed.error is None
    assert "if hidden_states.dtype == torch.float16:\n" in fixed.fixed
    assert "torch.where(torch.isinf(hidden_states).any() | torch.isnan(hidden_states).any()" in (
        _flat(fixed.fixed))
    torch.manual_seed(0)
    original = namespace(BART_GUARD)["Layer"]().half()
    rewritten = namespace(fixed.fixed)["Layer"]().half()
    rewritten.load_state_dict(original.state_dict(), strict=True)
    original.eval()
    rewritten.eval()
    small = torch.full((2, 8), 1e-4, dtype=torch.float16)   # no inf: the clamp is not taken
    large = torch.full((2, 8), 30.0, dtype=torch.float16)    # overflows to inf: clamp taken
    nan = small.clone()
    nan[0, 3] = float("nan")                                 # NaN: taken, NaN stays NaN
    cases = [small, large, nan]
    with torch.no_grad():
        assert graph_breaks(original, large) > graph_breaks(rewritten, large) == 0
        inputs = [(cases[i % 3],) for i in range(20)]
        graphs, compiled_outputs = _graphs_over_calls(rewritten, inputs)
        assert graphs == 1  # one graph, no recompile over 20 calls on both paths
        for (x,), compiled_out in zip(inputs, compiled_outputs, strict=True):
            expected = original(x)
            assert _same_bits(rewritten(x), expected)
            assert _same_bits(compiled_out, expected)
        taken = original(large)
        assert torch.isfinite(taken).all()  # the inputs do reach the clamp
    # fp32: the host test is False, nothing changes and nothing breaks
    original32 = namespace(BART_GUARD)["Layer"]()
    rewritten32 = namespace(fixed.fixed)["Layer"]()
    rewritten32.load_state_dict(original32.state_dict(), strict=True)
    with torch.no_grad():
        x = torch.randn(2, 8)
        assert _same_bits(rewritten32(x), original32(x))
        assert graph_breaks(rewritten32, x) == 0


VALIDATION = textwrap.dedent("""
    import torch


    def check(x: torch.Tensor) -> torch.Tensor:
        h = x * 2
        if (h < 0).any():
            raise ValueError("x must be non-negative")
        if not torch.isfinite(h).all():
            raise ValueError("x must be finite")
        return h.sqrt()
""")


def test_validation_guard_is_reported_not_rewritten() -> None:
    fixed = fix_code(VALIDATION, select=["NSY401"], unsafe_fixes=True, all_paths=True)
    assert fixed.error is None
    assert fixed.fixed == VALIDATION
    guards = [f for f in fixed.findings if f.code == "NSY401"]
    assert [f.line for f in guards] == [7, 9]
    assert all(f.fix is None and "no automatic fix: `raise ValueError` stops the code"
               in f.message for f in guards)
    check = namespace(VALIDATION)["check"]
    with pytest.raises(ValueError, match="non-negative"):
        check(torch.tensor([1.0, -1.0]))


LONG_ROPE = textwrap.dedent("""
    from functools import wraps

    import torch
    from torch import nn


    def rope_update(rope_forward):
        def switch(self, position_ids, device):
            seq_len = torch.max(position_ids) + 1
            limit = self.limit
            if seq_len > limit:
                if not hasattr(self, "long_inv_freq"):
                    self.long_inv_freq = self.init_fn(device, factor=4.0)
                self.register_buffer("inv_freq", self.long_inv_freq, persistent=False)
            else:
                self.original_inv_freq = self.original_inv_freq.to(device)
                self.register_buffer("inv_freq", self.original_inv_freq, persistent=False)

        @wraps(rope_forward)
        def wrapper(self, x, position_ids):
            switch(self, position_ids, device=x.device)
            return rope_forward(self, x, position_ids)

        return wrapper


    class Rope(nn.Module):
        def __init__(self):
            super().__init__()
            self.limit = 16
            self.register_buffer("inv_freq", self.init_fn(None, factor=1.0), persistent=False)
            self.original_inv_freq = self.inv_freq  # an alias, as in transformers

        def init_fn(self, device, factor):
            return 1.0 / (factor * 10000 ** (torch.arange(0, 8, 2, device=device) / 8))

        @torch.no_grad()
        @rope_update
        def forward(self, x, position_ids):
            freqs = position_ids[:, :, None].float() * self.inv_freq[None, None, :]
            return x * freqs.cos().repeat(1, 1, 2) + freqs.sin().repeat(1, 1, 2)
""")


def test_long_rope_buffer_switch() -> None:
    """Hugging Face's long-RoPE switch: both branches re-register ``inv_freq``; the rewrite
    selects it with torch.where after hoisting the lazy set-up. Same bits on short, long,
    short inputs (the alias ``original_inv_freq`` is never written through), no break, and
    no recompile after the second call: the first call runs the lazy initialisation, so
    the second finds ``long_inv_freq`` set (dynamo guards on ``hasattr``) and compiles once
    more, as the original does on its first long call."""
    fixed = fix_code(LONG_ROPE, select=["NSY101"], unsafe_fixes=True)
    assert fixed.error is None
    assert ('self.register_buffer("inv_freq", torch.where(seq_len > limit, self.long_inv_freq, '
            'self.original_inv_freq), persistent=False)') in _flat(fixed.fixed)
    original = namespace(LONG_ROPE)["Rope"]()
    rewritten = namespace(fixed.fixed)["Rope"]()
    x = torch.randn(1, 6, 8)
    short = torch.arange(6)[None]           # max 5: the original frequencies
    long = torch.arange(20, 26)[None]       # max 25 > 16: the long ones
    inputs = [(x, (short, long, short, short)[i % 4]) for i in range(20)]
    assert graph_breaks(original, x, long) > graph_breaks(rewritten, x, long) == 0
    original = namespace(LONG_ROPE)["Rope"]()
    rewritten = namespace(fixed.fixed)["Rope"]()
    eager = [original(*args) for args in inputs]
    assert not torch.equal(eager[0], eager[1])  # both paths are taken
    assert all(torch.equal(rewritten(*args), want)
               for args, want in zip(inputs, eager, strict=True))
    fresh = namespace(fixed.fixed)["Rope"]()
    torch._dynamo.reset()
    counter = GraphCounter()
    compiled = torch.compile(fresh, backend=counter)
    outputs = [compiled(*inputs[0]), compiled(*inputs[1])]
    assert counter.graphs == 2  # the lazy initialisation's guard, once
    outputs += [compiled(*args) for args in inputs[2:]]
    assert counter.graphs == 2  # no recompile when the buffer is rebound, on either path
    assert all(torch.equal(out, want) for out, want in zip(outputs, eager, strict=True))
