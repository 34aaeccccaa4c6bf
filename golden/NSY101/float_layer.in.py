# golden
# Issue 18, form f: `h` is the output of an nn.Linear, so a floating-point tensor; the clamp
# guard keeps its dtype and shape, the untaken clamp cannot raise or make NaN, and the
# condition is the same tensor test as before (NaN in `h`: max is NaN, NaN > 1e3 is False,
# on both sides). The fix is safe (tests/test_forward_forms_compile.py checks it bit for bit).
# A layer made with `dtype=` stays unsafe; an attribute that may hold any module gives a
# value of unknown kind (no finding).
import torch
import torch.nn as nn


class Bounded(nn.Module):
    def __init__(self, dtype=None, other=None):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.typed = nn.Linear(4, 4, dtype=dtype)
        self.maybe = nn.Linear(4, 4) if other is None else other

    def forward(self, x):
        h = self.lin(x)
        if h.abs().max() > 1e3:
            h = h.clamp(-1e3, 1e3)
        g = self.typed(x)
        if g.abs().max() > 1e3:
            g = g.clamp(-1e3, 1e3)
        k = self.maybe(x)
        if k.abs().max() > 1e3:
            k = k.clamp(-1e3, 1e3)
        return h + g + k


model = torch.compile(Bounded())
