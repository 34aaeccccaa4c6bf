"""Slicing must never change a finding.

On every golden input, labelled file, example and generated program, with
slicing forced on every file (``MIN_SLICED_BYTES = 0``): the findings of a
check, the findings with their edits and the fixed text are the same as with
the whole text. Plus the closure (what must stay) on small cases.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from linked_programs import linked_programs
from test_prefilter import _IDS, CORPUS
from torch_programs import torch_programs

from nosync_fix import slicing
from nosync_fix.config import Settings
from nosync_fix.engine import _live_rules, _need, _triggered_rules, process_source
from nosync_fix.prefilter import parse


@pytest.fixture(autouse=True)
def slice_every_file(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(slicing, "MIN_SLICED_BYTES", 0)
    yield


def _outcomes(source: str, base: Settings) -> list[tuple]:
    found = []
    for all_paths in (False, True):
        settings_ = dataclasses.replace(base, all_paths=all_paths)
        for fix, with_edits in ((False, False), (False, True), (True, False)):
            result = process_source(source, "case.py", settings_, fix=fix, with_edits=with_edits)
            found.append((result.error, result.fixed, result.findings, result.applied))
    return found


def assert_slicing_changes_nothing(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    base = Settings(unsafe_fixes=True)
    sliced = _outcomes(source, base)
    monkeypatch.setattr(slicing, "MIN_SLICED_BYTES", 10**12)
    assert sliced == _outcomes(source, base)
    monkeypatch.setattr(slicing, "MIN_SLICED_BYTES", 0)


def relevant(source: str) -> str | None:
    settings_ = Settings()
    tree = parse(source)
    live, found = _live_rules(source, tree, settings_, _triggered_rules(
        source, settings_, settings_.rules_for("case.py"), test_module=False))
    assert live and found is not None, "no rule is live on this case"
    return slicing.relevant_text(tree, source, found, [_need(rule, settings_) for rule in live])


@pytest.mark.parametrize("path", CORPUS, ids=_IDS)
def test_slicing_changes_nothing(path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_slicing_changes_nothing(path.read_text(encoding="utf-8"), monkeypatch)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(torch_programs())
def test_slicing_changes_nothing_on_generated_programs(source: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(slicing, "MIN_SLICED_BYTES", 0)
        assert_slicing_changes_nothing(source, monkeypatch)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(linked_programs())
def test_slicing_changes_nothing_on_programs_of_linked_functions(source: str) -> None:
    """What the analysis learns across functions (:mod:`linked_programs`) stays: drawn
    so, 13 of 150 programs lost or changed a finding before the closure kept it."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(slicing, "MIN_SLICED_BYTES", 0)
        assert_slicing_changes_nothing(source, monkeypatch)


def test_slicing_is_not_vacuous() -> None:
    """Slicing leaves something out of some corpus files (most hold one function)."""
    sliced = 0
    for path in CORPUS:
        source = path.read_text(encoding="utf-8")
        tree = parse(source)
        live, found = _live_rules(source, tree, Settings(), _triggered_rules(
            source, Settings(), Settings().rules_for("case.py"), test_module=False))
        if live and found is not None and slicing.relevant_text(
                tree, source, found, [_need(rule, Settings()) for rule in live]) is not None:
            sliced += 1
    assert sliced >= 10


_LOOP = "    for x in loader:\n        total += torch.relu(x).sum().item()\n"


def _kept_functions(text: str) -> set[str]:
    return {node.name for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_functions_without_signals_go_and_lines_stay() -> None:
    source = ("import torch\r\n\r\n@torch.no_grad()\r\ndef unrelated(a):\r\n"
              "    return a + 1\r\n\r\ndef train(model, loader):\r\n    total = 0\r\n"
              + _LOOP.replace("\n", "\r\n"))
    text = relevant(source)
    assert text is not None
    assert _kept_functions(text) == {"train"}
    assert text.count("\r\n") == source.count("\r\n")
    assert text.splitlines()[2:5] == ['"""', "", '"""']
    assert text.splitlines()[7:] == source.splitlines()[7:]


def test_a_function_that_kept_code_calls_stays() -> None:
    source = ("import torch\n\ndef helper(x):\n    return x * 2\n\ndef other():\n    return 1\n\n"
              "def train(model, loader):\n    total = 0\n" + _LOOP
              + "        total += helper(x).item()\n")
    assert _kept_functions(relevant(source) or "") == {"train", "helper"}


def test_every_function_that_mentions_a_module_variable_kept_code_uses_stays() -> None:
    source = ("import torch\n\nstate = load()\n\ndef reset():\n    print(state)\n\n"
              "def other():\n    return 1\n\n"
              "def train(model, loader):\n    total = state\n" + _LOOP)
    assert _kept_functions(relevant(source) or "") == {"train", "reset"}


def test_functions_that_only_share_a_module_constant_go() -> None:
    source = ("import logging\nimport torch\n\nSCALE = 2.0\nlog = logging.getLogger(__name__)\n"
              "\ndef other():\n    return 1\n\ndef report():\n    log.info('scale %s', SCALE)\n\n"
              "def train(model, loader):\n    total = 0\n" + _LOOP
              + "        log.debug('step')\n        total *= SCALE\n")
    assert _kept_functions(relevant(source) or "") == {"train"}
    constant_again = source.replace("\ndef report():", "\nSCALE = 3.0\n\ndef report():")
    assert _kept_functions(relevant(constant_again) or "") == {"train"}
    rebound = source.replace("\ndef report():", "\nSCALE = load()\n\ndef report():")
    assert _kept_functions(relevant(rebound) or "") == {"train", "report"}
    augmented = source.replace("\ndef report():", "\nSCALE += 1\n\ndef report():")
    assert _kept_functions(relevant(augmented) or "") == {"train", "report"}
    declared = source.replace("    log.info(", "    global SCALE\n    log.info(")
    assert _kept_functions(relevant(declared) or "") == {"train", "report"}


def test_functions_that_only_log_with_a_module_logger_go() -> None:
    source = ("import torch\nfrom .utils import logging\n\nlogger = logging.get_logger(__name__)\n"
              "\ndef other():\n    return 1\n\n"
              "def report(x):\n    logger.warning('value %s', x)\n\n"
              "def train(model, loader):\n    total = 0\n" + _LOOP
              + "        logger.info('step')\n")
    assert _kept_functions(relevant(source) or "") == {"train"}
    passed = source.replace("logger.warning('value %s', x)", "helper(logger, x)")
    assert _kept_functions(relevant(passed) or "") == {"train", "report"}
    method = source.replace("logger.warning('value %s', x)", "logger.log(x)")
    assert _kept_functions(relevant(method) or "") == {"train", "report"}
    declared = source.replace("    logger.warning(", "    global logger\n    logger.warning(")
    assert _kept_functions(relevant(declared) or "") == {"train", "report"}
    rebound = source.replace("\ndef report(x):", "\nlogger = make()\n\ndef report(x):")
    assert _kept_functions(relevant(rebound) or "") == {"train", "report"}


def test_names_bound_in_a_class_body_are_no_module_variables() -> None:
    source = ("import torch\n\nclass Output:\n    sample: torch.Tensor\n    scale = load()\n\n"
              "def other():\n    return 1\n\n"
              "def decode(sample):\n    sample = sample * 2\n    return sample\n\n"
              "def train(model, loader):\n    total = 0\n" + _LOOP
              + "        sample = model(x)\n")
    assert _kept_functions(relevant(source) or "") == {"train"}
    declared = source.replace("    scale = load()\n", "    global sample\n    sample = load()\n")
    assert _kept_functions(relevant(declared) or "") == {"train", "decode"}
    # a function of module-level code that declares it global (not a unit: always kept)
    nested = source.replace("class Output:\n    sample: torch.Tensor\n    scale = load()\n",
                            "if True:\n    def f():\n        global sample\n"
                            "        sample = load()\n")
    assert _kept_functions(relevant(nested) or "") == {"train", "decode", "f"}
    module = source.replace("class Output:\n", "sample = load()\nclass Output:\n")
    assert _kept_functions(relevant(module) or "") == {"train", "decode"}


def test_methods_that_assign_an_attribute_a_kept_method_reads_stay() -> None:
    source = ("import torch\n\nclass Loop:\n"
              "    def __init__(self):\n        self.total = torch.zeros(())\n"
              "        self.name = 'loop'\n"
              "    def setup(self):\n        self.register_buffer('scale', torch.ones(()))\n"
              "    def describe(self):\n        return self.name\n"
              "    def run(self, loader):\n        for x in loader:\n"
              "            self.total += self.scale * x.sum().item()\n")
    assert _kept_functions(relevant(source) or "") == {"__init__", "setup", "run"}


@pytest.mark.parametrize("pinned", [
    "def pinned():\n    global counter\n    counter = 1\n",
    "def pinned():\n    import numpy\n    return numpy\n",
    "def pinned(f):\n    return torch.compile(f)\n",
])
def test_functions_that_change_module_facts_stay(pinned: str) -> None:
    source = ("import torch\n\ndef other():\n    return 1\n\n" + pinned
              + "\ndef train(model, loader):\n    total = 0\n" + _LOOP)
    assert _kept_functions(relevant(source) or "") == {"train", "pinned"}


#: A loop that copies a factory's tensor to the host: a sync only on another default device.
_LINSPACE_LOOP = """

def unrelated():
    return 1


def train(model, loader):
    buf = torch.linspace(0, 1, 5)
    for b in loader:
        model(b)
        values = buf.tolist()
        print(values)
"""

# What the analysis learns from other functions than the one a finding is in: each of
# these cases lost its finding (or changed it) when slicing left the function out.
_ACROSS_FUNCTIONS = {
    # NSY304 follows `self.a()` from forward to the output call in `b`, through `a`.
    "traced_method_chain": ("""import torch
from torch import nn


class M(nn.Module):
    def forward(self, x):
        return self.a(x)

    def a(self, x):
        return self.b(x + 1)

    def b(self, y):
        print("shape", y.shape)
        return y * 2

    def unrelated(self):
        return 1
""", {"forward", "a", "b"}),
    # The registration makes `on_batch_end` hot.
    "callback_registration": ("""import torch


def on_batch_end(trainer):
    print(f"loss {trainer.loss.item():.4f}")


def unrelated():
    return 1


def main(trainer):
    trainer.set_callback("on_batch_end", on_batch_end)
    trainer.run()
""", {"on_batch_end", "main"}),
    # One eager `Gate()` anywhere: the forward does not always run compiled (no torch.cond).
    "eager_instance_of_a_compiled_class": ("""import torch
import torch.nn as nn


class Gate(nn.Module):
    def forward(self, y: torch.Tensor):
        score = y.sum()
        if score > 0:
            a = y * 2
            return a
        return y - 1


def build():
    return torch.compile(Gate())


def eager_copy():
    return Gate()


def unrelated():
    return 1
""", {"forward", "build", "eager_copy"}),
    # A local class with `update` is a meter.
    "meter_class": ("""import torch


class Tracker:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    def reset(self):
        self.count = 0


def unrelated():
    return 1


def train(model, loader):
    tracker = Tracker()
    for x in loader:
        loss = model(x).sum()
        tracker.update(loss.item())
    return tracker.sum / tracker.count
""", {"__init__", "update", "reset", "train"}),
    # Every call of `show` passes a tensor: its elements are tensors, formatted one by one.
    "call_sites": ("""import torch


def show(values):
    for v in values:
        print(f"{v:.3f}")


def unrelated():
    return 1


def train(model, loader):
    for x in loader:
        out = model(x)
    show(torch.randn(3, device="cuda"))
""", {"show", "train"}),
    # With another default device, `torch.linspace(...)` is no CPU tensor.
    "default_device": ("""import torch


def setup():
    torch.set_default_device("cuda")
""" + _LINSPACE_LOOP, {"setup", "train"}),
    # The same, set by a `with torch.device(...)` block.
    "default_device_block": ("""import torch


def setup():
    with torch.device("cuda"):
        pass
""" + _LINSPACE_LOOP, {"setup", "train"}),
}


@pytest.mark.parametrize("name", _ACROSS_FUNCTIONS)
def test_what_the_analysis_reads_in_other_functions_stays(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source, kept = _ACROSS_FUNCTIONS[name]
    assert process_source(source, "case.py", Settings(), fix=False).findings
    assert _kept_functions(relevant(source) or "") == kept
    assert_slicing_changes_nothing(source, monkeypatch)


def test_self_calls_are_followed_only_for_traced_output() -> None:
    """Without a rule that follows traced code, `self.a()` alone keeps nothing."""
    source = _ACROSS_FUNCTIONS["traced_method_chain"][0].replace(
        'print("shape", y.shape)', "pass").replace(
        "return self.a(x)", "total = 0\n        for t in x:\n"
                            "            total += t.sum().item()\n        return self.a(total)")
    assert _kept_functions(relevant(source) or "") == {"forward"}


def test_nothing_to_leave_out_gives_none() -> None:
    assert relevant("import torch\n\ndef train(model, loader):\n    total = 0\n" + _LOOP) is None


# -- argparse's declarations in a function without signals --------------------------------------

_SCRIPT = '''import argparse
import torch


def parse_args():
    parser = argparse.ArgumentParser(description="train")
    parser.add_argument("--lr", type=float, default=1e-4,
                        help="learning rate")
    # the batch
    parser.add_argument("--batch", type=int, default=-8 * 2)  # per device
    group = parser.add_argument_group("data")
    group.add_argument("--paths", nargs="+", default=("a", {"b": None}), help=f"{str.lower}")
    parser.add_argument("--mode", choices=[m.lower() for m in ("A", "B")])
    return parser.parse_args()


def train(model, loader):
    args = parse_args()
    total = 0
    for x in loader:
        total += torch.relu(x).sum().item() * args.lr
    return total
'''


def _declarations_left(text: str) -> list[str]:
    return re.findall(r"\.add_argument\(([^,)]*)", text)


def test_argument_declarations_of_a_function_without_signals_go(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = relevant(_SCRIPT)
    assert text is not None
    lines, original = text.splitlines(), _SCRIPT.splitlines()
    assert len(lines) == len(original)
    # siblings that follow each other make one string; a comment between them goes too
    assert lines[6:10] == ['    """', "", "", '"""']
    assert lines[11] == '    """"""'
    assert [line for i, line in enumerate(lines) if line != original[i]] == [
        lines[6], "", "", '"""', lines[11]]
    assert _declarations_left(text) == ['"--mode"']  # its choices hold a comprehension
    assert_slicing_changes_nothing(_SCRIPT, monkeypatch)


@pytest.mark.parametrize("change", [
    # the receiver is bound otherwise too, or is no parser
    ('parser = argparse.ArgumentParser(description="train")',
     'parser = argparse.ArgumentParser(description="train")\n    parser = make(parser)'),
    ('parser = argparse.ArgumentParser(description="train")', "parser = make()"),
    ("def parse_args():\n    parser", "def parse_args(parser):\n    parser"),
    ("def parse_args():\n", "def parse_args():\n    global parser\n"),
    # arguments that mention a name other than a builtin the file binds nowhere
    ("default=1e-4", "default=LR"),
    ("import torch\n", "import torch\nfrom constants import *\n"),
    ("import torch\n", "import torch\nfloat = int\n"),
    ('parser = argparse.ArgumentParser(description="train")',
     'parser = argparse.ArgumentParser(description="train")\n    float = int'),
    ("default=1e-4", "default=lr.item()"),
    # shared lines
    ('help="learning rate")', 'help="learning rate"); print(1)'),
    ('    parser.add_argument("--lr"', '    if True: parser.add_argument("--lr"'),
])
def test_argument_declarations_that_stay(change: tuple[str, str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = change
    assert old in _SCRIPT
    source = _SCRIPT.replace(old, new, 1)
    assert '"--lr"' in _declarations_left(relevant(source) or source)
    assert_slicing_changes_nothing(source, monkeypatch)


def test_argument_declarations_of_a_function_with_signals_stay() -> None:
    source = _SCRIPT.replace("    return parser.parse_args()\n",
                             "    for x in loader:\n        print(x.item())\n"
                             "    return parser.parse_args()\n")
    assert _declarations_left(relevant(source) or source) == [
        '"--lr"', '"--batch"', '"--paths"', '"--mode"']


def test_a_declaration_that_would_become_a_docstring_stays() -> None:
    source = _SCRIPT.replace(
        '    parser.add_argument("--mode"',
        '    def more():\n        parser.add_argument("--more")\n        return parser\n'
        '    parser.add_argument("--mode"')
    assert _declarations_left(relevant(source) or source) == ['"--more"', '"--mode"']


@pytest.mark.parametrize("binding", [
    "def float():\n    return 0\n",
    "class float:\n    pass\n",
    "try:\n    pass\nexcept ImportError as float:\n    pass\n",
    "from numbers import Real as float\n",
    "def other():\n    global float\n",
    "for float in range(2):\n    pass\n",
])
def test_a_builtin_the_file_binds_is_no_constant(binding: str) -> None:
    source = _SCRIPT.replace("\n\ndef parse_args", "\n\n" + binding + "\n\ndef parse_args", 1)
    assert '"--lr"' in _declarations_left(relevant(source) or source)
    assert '"--paths"' not in _declarations_left(relevant(source) or source)


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_argument_declarations_go_whatever_the_line_endings(
        ending: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _SCRIPT.replace('help="learning rate"', 'help="taux d\'apprentissage é"').replace(
        "\n", ending)
    text = relevant(source)
    assert text is not None and text.count(ending) == source.count(ending)
    assert _declarations_left(text) == ['"--mode"']
    assert_slicing_changes_nothing(source, monkeypatch)
