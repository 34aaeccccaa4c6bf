"""A hypothesis strategy for modules whose functions lean on each other.

:mod:`torch_programs` draws one to three training functions that hardly refer to
each other. What the analysis learns across functions (a method that ``forward``
reaches through ``self.a()``, the callers of a helper, a registration that makes a
callback hot, a class compiled in one function and made eagerly in another, a meter
class's ``update``, a default device set elsewhere) is what slicing can lose when it
leaves a function out, so these programs are built of such links: a module class
whose methods call each other, helpers called by name from a loop, and the set-up
functions that change facts about the rest. Each function is drawn from a few
bodies, with or without something a rule reports, so that whether it is kept
depends on the links. They are meant to be analysed, not run.
"""

from __future__ import annotations

from hypothesis import strategies as st

_METHODS = ("a", "b", "c")
_HELPERS = ("show", "summarise", "scale")


@st.composite
def _method(draw: st.DrawFn, name: str) -> list[str]:
    """A method of ``Net``: calls another method, outputs, reads or branches."""
    lines = [f"    def {name}(self, x):"]
    for _ in range(draw(st.integers(1, 3))):
        other = draw(st.sampled_from(_METHODS))
        lines.append("        " + draw(st.sampled_from([
            f"x = self.{other}(x)",
            'print("shape", x.shape)',
            'logger.warning("odd input")',
            'warnings.warn("slow path")',
            "x = x * self.scale",
            "n = x.sum().item()",
            "if x.sum() > 0:\n            x = x * 2",
            "x = self.proj(x)",
            "self.steps += 1",
            f"x = {draw(st.sampled_from(_HELPERS))}(x)",
        ])))
    lines.append("        return x")
    return lines


@st.composite
def _net(draw: st.DrawFn) -> list[str]:
    lines = ["class Net(nn.Module):",
             "    def __init__(self):",
             "        super().__init__()",
             "        self.proj = nn.Linear(4, 4)",
             "        self.scale = torch.ones(1)",
             "        self.steps = 0",
             "",
             "    def forward(self, x):"]
    for _ in range(draw(st.integers(1, 2))):
        lines.append(f"        x = self.{draw(st.sampled_from(_METHODS))}(x)")
    lines.append("        return x")
    for name in _METHODS:
        if draw(st.integers(0, 3)):
            lines += [""] + draw(_method(name))
    return lines


@st.composite
def _helper(draw: st.DrawFn, name: str) -> list[str]:
    """A module function with a parameter: iterated and formatted, read, or passed on."""
    body = draw(st.sampled_from([
        ["for v in values:", '    print(f"{v:.3f}")'],
        ["for i, v in enumerate(values):", '    print(f"{i}: {v:.4f}")'],
        ["total = 0.0", "for v in values:", "    total += v", "return total"],
        ["return values.sum().item()"],
        ["return values * 2"],
        [f"return {draw(st.sampled_from(_HELPERS))}(values)"],
        ['print("values", len(values))'],
    ]))
    return [f"def {name}(values):"] + ["    " + line for line in body]


@st.composite
def _train(draw: st.DrawFn) -> list[str]:
    lines = ["def train(model, loader, trainer):", "    total = 0.0"]
    if draw(st.booleans()):
        lines.append("    tracker = Tracker()")
    lines.append("    for x in loader:")
    for _ in range(draw(st.integers(1, 4))):
        helper = draw(st.sampled_from(_HELPERS))
        lines.append("        " + draw(st.sampled_from([
            "out = model(x)",
            f"{helper}(out)",
            f"{helper}(x.cpu())",
            f'{helper}(torch.randn(3, device="cuda"))',
            f"{helper}([1.0, 2.0])",
            "total += out.sum().item()",
            "tracker.update(out.mean().item())",
            "values = buf.tolist()",
        ])))
    lines.append("    return total")
    return lines


@st.composite
def linked_programs(draw: st.DrawFn) -> str:
    """A module: imports, maybe a meter class and a model class, helpers, a training
    function and the set-up functions that change facts about them."""
    lines = ["import logging", "import warnings", "", "import torch", "import torch.nn as nn",
             "", "logger = logging.getLogger(__name__)", "buf = torch.linspace(0, 1, 5)",
             ""]
    if draw(st.booleans()):
        lines += ["", "class Tracker:", "    def __init__(self):", "        self.sum = 0.0", "",
                  "    def update(self, value):", "        self.sum += value", "",
                  "    def reset(self):", "        self.sum = 0.0", ""]
    if draw(st.booleans()):
        lines += [""] + draw(_net()) + [""]
    for name in _HELPERS:
        if draw(st.booleans()):
            lines += ["", ""] + draw(_helper(name))
    lines += ["", ""] + draw(_train())
    setups = draw(st.lists(st.sampled_from([
        ["def setup():", '    torch.set_default_device("cuda")'],
        ["def setup_with():", '    with torch.device("cuda"):', "        return Net()"],
        ["def register(trainer):", '    trainer.set_callback("on_batch_end", show)'],
        ["def build():", "    return torch.compile(Net())"],
        ["def eager():", "    return Net()"],
        ["def make_tracker():", "    return Tracker()"],
        ["def unrelated():", "    return 1"],
    ]), max_size=4, unique_by=lambda lines: lines[0]))
    for setup in setups:
        lines += ["", ""] + setup
    return "\n".join(lines) + "\n"
