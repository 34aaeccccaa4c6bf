"""The pre-filter must never hide a finding.

Three checks, each on every golden input, every labelled file, the examples and
generated training programs:

* findings and fixes are identical with the pre-filter on and off;
* every node the analysis calls hot lies in a region the scan calls hot;
* every index the rules take for a boolean mask may be one for the scan
  (``tests/test_maybe_tensors.py`` checks it with the tensors).

Plus: a scan that stops early answers each need as the full scan does, and the
regions and host values behave as documented on small cases.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from libcst.metadata import PositionProvider
from torch_programs import torch_programs

from golden import cases
from nosync_fix.analysis import ModuleAnalysis
from nosync_fix.config import Settings
from nosync_fix.engine import live_rules, process_source
from nosync_fix.prefilter import (
    ALL_SIGNALS,
    Need,
    Signal,
    hot_locations,
    parse,
    scan,
)
from nosync_fix.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted(
    [c.input for c in cases()]
    + list((ROOT / "tests" / "analysis" / "labelled").glob("*.py"))
    + list((ROOT / "examples").rglob("*.py"))
)
_IDS = [str(p.relative_to(ROOT)) for p in CORPUS]


def _outcome(source: str, settings: Settings, fix: bool) -> tuple:
    result = process_source(source, "case.py", settings, fix=fix)
    return (result.error, result.fixed, result.findings, result.applied)


def assert_same_with_and_without_prefilter(source: str, base: Settings) -> None:
    for all_paths in (False, True):
        for fix in (False, True):
            on = dataclasses.replace(base, all_paths=all_paths, prefilter=True)
            off = dataclasses.replace(on, prefilter=False)
            assert _outcome(source, on, fix) == _outcome(source, off, fix), (
                f"the pre-filter changed the result (all_paths={all_paths}, fix={fix})")


@pytest.mark.parametrize("path", CORPUS, ids=_IDS)
def test_prefilter_changes_nothing(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert_same_with_and_without_prefilter(source, Settings(unsafe_fixes=True))


@pytest.mark.parametrize("source", [
    # A host test (`is None`) that still reads the device on every iteration: NSY104.
    "import torch\n\n@torch.compile\ndef f(y):\n    while y.mean().item() is None:\n"
    "        break\n",
    # A copy to the host spelled with .to(): NSY903.
    "import torch\n\ndef train(loader):\n    for x in loader:\n"
    "        x = torch.relu(x)\n        y = x.to('cpu')\n",
    # Stores into CPU tensors made by a helper of the file, or cut from a factory's result
    # by a method that keeps the device: NSY903.
    "import torch\n\ndef make():\n    return torch.zeros(3)\n\ndef train(loader):\n"
    "    buf = make()\n    for i, x in enumerate(loader):\n"
    "        buf[i] = torch.relu(x.cuda()).sum()\n",
    "import torch\n\ndef train(loader):\n    buf = torch.zeros(3, 4).abs()\n"
    "    for i, x in enumerate(loader):\n        buf[i] = torch.relu(x.cuda()).sum()\n",
    # A tensor handed to TensorBoard's writer, which reads it: NSY303.
    "import torch\nfrom torch.utils.tensorboard import SummaryWriter\n\n"
    "def train(loader):\n    writer = SummaryWriter()\n    for step, x in enumerate(loader):\n"
    "        writer.add_scalar('loss', torch.relu(x.cuda()).sum(), step)\n",
    # A tensor formatted into a bar's description, a tensor handed to the bar: NSY303.
    "import torch\nfrom tqdm import tqdm\n\ndef train(model, loader):\n    bar = tqdm(loader)\n"
    "    for x in bar:\n        loss = torch.relu(x.cuda()).sum()\n"
    "        bar.set_description(f'loss {loss}')\n",
    "import torch\nfrom tqdm import tqdm\n\ndef train(model, loader):\n    bar = tqdm(loader)\n"
    "    for x in bar:\n        bar.set_postfix(loss=torch.relu(x.cuda()).sum())\n",
])
def test_prefilter_keeps_findings_it_once_hid(source: str) -> None:
    assert_same_with_and_without_prefilter(source, Settings(unsafe_fixes=True))
    assert process_source(source, "case.py", Settings(unsafe_fixes=True), fix=False).findings


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(torch_programs())
def test_prefilter_changes_nothing_on_generated_programs(source: str) -> None:
    assert_same_with_and_without_prefilter(source, Settings(unsafe_fixes=True))


def test_every_rule_declares_signals_or_none() -> None:
    for rule in all_rules():
        assert rule.signals is None or isinstance(rule.signals, Signal), rule.code


# -- the regions are a superset of HotPaths --------------------------------------------------


def _char_column(text: str, line: int, byte_column: int) -> int:
    return len(text.splitlines()[line - 1].encode("utf-8")[:byte_column].decode("utf-8"))


def _regions_cover_hot_paths(source: str) -> int:
    tree = parse(source)
    hot = {(line, _char_column(source, line, column))
           for line, column in hot_locations(tree, source)}
    wrapper = cst.MetadataWrapper(cst.parse_module(source))
    analysis = ModuleAnalysis(wrapper)
    positions = wrapper.resolve(PositionProvider)
    checked = 0
    for node, rng in positions.items():
        if not isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement,
                                 cst.Call, cst.Comparison, cst.Subscript)):
            continue
        if analysis.hot.is_hot(node):
            checked += 1
            assert (rng.start.line, rng.start.column) in hot, (
                f"{type(node).__name__} at {rng.start.line}:{rng.start.column + 1} is hot "
                "for the analysis but not for the pre-filter")
    return checked


@pytest.mark.parametrize("path", CORPUS, ids=_IDS)
def test_scan_regions_cover_the_hot_paths(path: Path) -> None:
    _regions_cover_hot_paths(path.read_text(encoding="utf-8"))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(torch_programs())
def test_scan_regions_cover_the_hot_paths_of_generated_programs(source: str) -> None:
    _regions_cover_hot_paths(source)


def test_the_region_check_is_not_vacuous() -> None:
    assert sum(_regions_cover_hot_paths(p.read_text(encoding="utf-8")) for p in CORPUS) > 200


@pytest.mark.parametrize("path", CORPUS, ids=_IDS)
def test_early_stop_answers_each_need_as_the_full_scan(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    tree = parse(source)
    full = scan(tree, source)
    for signal in Signal:
        if signal is Signal.NONE:
            continue
        for anywhere in (False, True):
            need = Need(signal, anywhere)
            assert scan(tree, source, needs=[need]).meets(need) == full.meets(need), need
    needs = [Need(Signal.READ), Need(Signal.CONDITION | Signal.OUTPUT, True)]
    partial = scan(tree, source, needs=needs)
    assert [partial.meets(n) for n in needs] == [full.meets(n) for n in needs]


# -- behaviour on small cases ----------------------------------------------------------------


def _hot(source: str, hot_functions: tuple[str, ...] = ()) -> Signal:
    """The signals in hot regions of ``source`` in a torch file (``.item()`` of an
    unknown value reads only where torch is imported)."""
    source = "import torch\n" + source
    return scan(parse(source), source, hot_functions).hot


@pytest.mark.parametrize("source", [
    "for x in xs:\n    total += x.item()\n",
    "while t.item() > 0:\n    pass\n",
    "class M(nn.Module):\n    def forward(self, x):\n        return x.item()\n",
    "def train_step(x):\n    return x.item()\n",
    "@torch.compile\ndef f(x):\n    return x.item()\n",
    "import torch as T\n@T.compile(mode='max-autotune')\ndef f(x):\n    return x.item()\n",
    "from torch import compile as c\ndef f(x):\n    return x.item()\ng = c(f)\n",
    "from torch._dynamo import optimize as o\n@o('inductor')\ndef f(x):\n    return x.item()\n",
    "import torch._dynamo as d\ndef f(x):\n    return x.item()\ng = d.optimize('x')(f)\n"
    "h = torch.\\\ncompile(f)\n",
    "optimizer = 1\ndef f(x):\n    return x.item()\ng = torch.compile(f)\n",
    "values = [t.item() for t in ts]\n",
    "def __init__(self, loader):\n    def train_step(x):\n        return x.item()\n",
    "def cb(trainer):\n    return trainer.loss.item()\ntrainer.set_callback('on_batch_end', cb)\n",
])
def test_hot_regions(source: str) -> None:
    assert Signal.READ in _hot(source)


@pytest.mark.parametrize("source", [
    "x = t.item()\n",
    "def f(x):\n    return x.item()\n",
    "class M:\n    def forward(self, x):\n        return x.item()\n",
    "def __init__(self, xs):\n    for x in xs:\n        self.v = x.item()\n",
    "def collate_fn(batch):\n    for b in batch:\n        b.item()\n",
    "class D(Dataset):\n    def __getitem__(self, i):\n        for x in self.xs:\n"
    "            x.item()\n",
    "values = [t for t in ts.tolist()]\n",  # the first iterable is not hot
    # `optimizer` and `compiled` name no torch.compile
    "import torch\noptimizer = torch.optim.SGD([])\ndef f(x):\n    return x.item()\n"
    "g = optimizer(f)\ncompiled = torch.jit.script(f)\n",
    "def cb(trainer):\n    return trainer.loss.item()\ntrainer.set_callback('on_epoch_end', cb)\n",
])
def test_cold_regions(source: str) -> None:
    assert Signal.READ not in _hot(source)
    source = "import torch\n" + source
    assert Signal.READ in scan(parse(source), source).anywhere


def test_configured_hot_functions() -> None:
    source = "def evaluate(x):\n    return x.item()\n"
    assert Signal.READ not in _hot(source)
    assert Signal.READ in _hot(source, ("evaluate",))


@pytest.mark.parametrize("source, signal", [
    ("for x in xs:\n    total += x.item()\n", Signal.ACCUMULATE),
    ("for x in xs:\n    total = total + float(x)\n", Signal.ACCUMULATE),
    ("for x in xs:\n    best = max(best, x.item())\n", Signal.ACCUMULATE),
    ("for x in xs:\n    meter.update(x.item(), 4)\n", Signal.ACCUMULATE),
    ("for x in xs:\n    total = x.item() + total\n", Signal.ACCUMULATE),
    ("for x in xs:\n    if x > 0:\n        pass\n", Signal.CONDITION),
    ("for x in xs:\n    y = a if x else b\n", Signal.CONDITION),
    ("for x in xs:\n    assert x.sum() < 3\n", Signal.CONDITION),
    ("for x in xs:\n    print(x)\n", Signal.OUTPUT),
    ("for x in xs:\n    s = f'{x:.3f}'\n", Signal.OUTPUT),
    ("logger = logging.getLogger()\nfor x in xs:\n    logger.info('%s', x)\n", Signal.OUTPUT),
    ("from logging import warning\nfor x in xs:\n    warning('%s', x)\n", Signal.OUTPUT),
    ("log = logging.getLogger()\nfor x in xs:\n    log.fatal('%s', x)\n", Signal.OUTPUT),
    ("for x in xs:\n    torch.cuda.synchronize()\n", Signal.SYNC),
    ("for x in xs:\n    y = x[x > 0]\n", Signal.DATA_DEPENDENT),
    ("for x in xs:\n    i = x.nonzero()\n", Signal.DATA_DEPENDENT),
    ("for x in xs:\n    i = torch.where(x)\n", Signal.DATA_DEPENDENT),
    ("buf = torch.zeros(3)\nfor i, x in enumerate(xs):\n    buf[i] = x\n", Signal.STORE),
    ("for x in xs:\n    y = x.to('cpu')\n", Signal.READ),
    ("for x in xs:\n    y = x.to(device=torch.device('cpu'))\n", Signal.READ),
    ("for x in xs:\n    writer.add_scalar('loss', x.sum(), 0)\n", Signal.READ),
    ("for x in xs:\n    writer.add_scalars('parts', {'a': x}, 0)\n", Signal.READ),
])
def test_signals(source: str, signal: Signal) -> None:
    assert signal in _hot("xs = torch.ones(3, 4)\n" + source)


@pytest.mark.parametrize("source, signal", [
    ("for x in xs:\n    total = total + float(x)\n", Signal.ACCUMULATE),
    ("for x in xs:\n    if x > 0:\n        pass\n", Signal.CONDITION),
    ("for x in xs:\n    print(x)\n", Signal.OUTPUT),
    ("for x in xs:\n    s = f'{x:.3f}'\n", Signal.OUTPUT),
    ("for x in xs:\n    y = x[x > 0]\n", Signal.DATA_DEPENDENT),
    ("buf = torch.zeros(3)\nfor i, x in enumerate(xs):\n    buf[i] = x\n", Signal.STORE),
    ("for m in ms:\n    n = int(m.group(1))\n", Signal.READ),
])
def test_values_that_cannot_be_tensors_give_no_signal(source: str, signal: Signal) -> None:
    """``xs`` holds nothing the analysis could call a tensor: nothing to act on."""
    assert signal not in _hot(source)
    assert signal in _hot(source + "x.backward()\nm.backward()\n")  # evidence of a tensor


def test_stores_into_what_cannot_be_a_host_buffer_give_no_signal() -> None:
    assert Signal.STORE not in _hot("for x in xs:\n    state['a'] = x\nx.backward()\n")
    assert Signal.STORE not in _hot("state = dict()\nfor x in xs:\n    state['a'] = x\n"
                                    "x.backward()\n")
    assert Signal.STORE in _hot("state = t.cpu()\nfor x in xs:\n    state['a'] = x\n"
                                "x.backward()\n")  # bound to a method's result: maybe a copy
    assert Signal.STORE in _hot("import numpy\nstate = numpy.load(f)\nfor x in xs:\n"
                                "    state['a'] = x\nx.backward()\n")  # an array
    # An unknown function's result: the analysis never calls it an array.
    assert Signal.STORE not in _hot("import numpy\nstate = load()\nfor x in xs:\n"
                                    "    state['a'] = x\nx.backward()\n")
    assert Signal.STORE not in _hot("import numpy\nstate = {}\nfor x in xs:\n"
                                    "    state['a'] = x\nx.backward()\n")  # never one
    assert Signal.STORE not in _hot("import numpy\nstate, n = {}, 0\nfor x in xs:\n"
                                    "    state['a'] = x\nx.backward()\n")
    assert Signal.STORE in _hot("import numpy\nstate, n = numpy.load(f), 0\nfor x in xs:\n"
                                "    state['a'] = x\nx.backward()\n")
    # Bound to a method's result: a buffer only when made on the host, as the rules see it.
    assert Signal.STORE not in _hot("state = self.head.losses(t)\nfor x in xs:\n"
                                    "    state['a'] = x\nx.backward()\n")
    assert Signal.STORE in _hot("state = t.cpu().view(-1)\nfor x in xs:\n"
                                "    state['a'] = x\nx.backward()\n")
    assert Signal.STORE in _hot("state = torch.zeros(3).float()\nfor x in xs:\n"
                                "    state['a'] = x\nx.backward()\n")
    assert Signal.STORE in _hot("import torch\nstate = torch.sigmoid(t.cpu())\nfor x in xs:\n"
                                "    state['a'] = x\nx.backward()\n")  # a torch function of one


def test_item_of_an_unknown_value_reads_only_in_a_torch_file() -> None:
    source = "for x in xs:\n    y = x.item()\n"
    assert Signal.READ in _hot(source)
    assert Signal.READ not in scan(parse(source), source).hot  # no torch
    # Beside numpy too: NSY906 reports `loss.item()` of an unknown `loss` there.
    numpy = "import numpy\n" + source
    assert Signal.READ in _hot(numpy)
    assert Signal.READ in _hot(numpy + "x.backward()\n")
    assert Signal.READ in _hot("for x in xs:\n    y = x.cpu()\n")  # a copy, whatever x is


def test_reads_count_whatever_the_receiver() -> None:
    assert Signal.OUTPUT in _hot("for x in xs:\n    print(x.item())\n")
    assert Signal.CONDITION in _hot("for x in xs:\n    if x.item() > 0:\n        pass\n")


def test_indexes_of_several_elements_are_no_masks() -> None:
    source = "xs = torch.ones(3, 4)\nfor x in xs:\n    y = x[x > 0, 1]\n"
    assert Signal.DATA_DEPENDENT not in _hot(source)
    assert Signal.DATA_DEPENDENT in _hot(source.replace(", 1]", ",]"))


@pytest.mark.parametrize(("source", "selects"), [
    ("xs = torch.ones(3, 4)\nfor x in xs:\n    y = x[x > 0]\n", True),
    ("xs = torch.ones(3, 4)\nfor x in xs:\n    m = x.isnan()\n    y = x[~m]\n", True),
    ("xs = torch.ones(3, 4)\nfor x in xs:\n    y = x[x.argmax()]\n", False),
    ("xs = torch.ones(3, 4)\nfor i, x in enumerate(xs):\n    y = x[idx[i].view(-1)]\n", False),
])
def test_only_indexes_that_may_be_masks_select(source: str, selects: bool) -> None:
    assert (Signal.DATA_DEPENDENT in _hot(source)) is selects


@pytest.mark.parametrize(("call", "dependent"), [
    ("h.repeat_interleave(torch.tensor([1, 2]), dim=1)", True),
    ("torch.repeat_interleave(h, torch.tensor([1, 2]))", True),
    ("h.repeat_interleave(repeats=torch.tensor([1, 2]))", True),
    # Repeats the analysis does not know for a tensor: NSY904 says nothing.
    ("h.repeat_interleave(r, dim=1)", False),
    ("torch.repeat_interleave(h, self.repeats // 2)", False),
    ("h.repeat_interleave(torch.tensor([1, 2]), dim=1, output_size=4)", False),
    ("h.repeat_interleave(2, dim=1)", False),
    ("torch.repeat_interleave(h, 3, dim=0)", False),
    ("h.repeat_interleave(repeats=4)", False),
])
def test_repeat_interleave_with_a_static_shape_is_not_data_dependent(call: str,
                                                                     dependent: bool) -> None:
    source = f"class M(nn.Module):\n    def forward(self, h, r):\n        return {call}\n"
    assert (Signal.DATA_DEPENDENT in _hot(source)) is dependent
    assert_same_with_and_without_prefilter("import torch\nfrom torch import nn\n" + source,
                                           Settings())
    # The function form under an alias of torch: its repeats are the second argument.
    if call.startswith("torch."):
        aliased = "import torch as th\n" + source.replace("torch.", "th.")
        assert (Signal.DATA_DEPENDENT in _hot(aliased)) is dependent


def test_parameters_of_forward_may_be_tensors() -> None:
    source = "class M(nn.Module):\n    def forward(self, x):\n        return x[x > 0].sum()\n"
    assert Signal.DATA_DEPENDENT in _hot(source)


def test_a_rule_is_live_when_any_of_its_triggers_is_in_the_text() -> None:
    by_name = {rule.__name__: rule for rule in all_rules()}
    writer, synchronize = by_name["MetricWriterTensor"], by_name["ExplicitSynchronize"]
    assert len(writer.triggers) > 1 and synchronize.triggers == ("synchronize(",)
    no_scan = dataclasses.replace(Settings(), prefilter=False)
    rules = [writer, synchronize]
    for trigger in writer.triggers:  # any one of them, the last as well as the first
        source = f"x = 1  # {trigger}\n"
        assert live_rules(source, parse(source), no_scan, rules) == [writer]
    source = "torch.cuda.synchronize()\n"
    assert live_rules(source, parse(source), no_scan, rules) == [synchronize]
    assert live_rules("x = 1\n", parse("x = 1\n"), no_scan, rules) == []
    triggerless = type("Triggerless", (writer,), {"triggers": ()})
    assert live_rules("x = 1\n", parse("x = 1\n"), no_scan, [triggerless]) == [triggerless]


def test_nothing_is_hot_in_a_test_file() -> None:
    source = "import torch\nfor x in torch.ones(3):\n    print(x.item())\n"
    rules = list(all_rules())
    assert live_rules(source, parse(source), Settings(), rules)
    hot_only = [r for r in live_rules(source, parse(source), Settings(), rules,
                                      test_module=True) if r.hot_paths_only]
    assert not hot_only
    everywhere = dataclasses.replace(Settings(), all_paths=True)
    assert live_rules(source, parse(source), everywhere, rules, test_module=True)


def test_conversions_and_plain_reads_are_no_accumulation() -> None:
    source = "for x in xs:\n    total = float(total)\n    y = x.item()\n    z = y + x.item()\n"
    assert Signal.ACCUMULATE not in _hot(source)
    assert Signal.READ in _hot(source)


@pytest.mark.parametrize("source", [
    "for i in range(10):\n    if i % 10 == 0:\n        print(i, 'steps')\n",
    "for i, x in enumerate(xs):\n    if i == 0 and x is None:\n        print(f'{i}')\n",
    "n = 3\nfor i in range(n):\n    step = i + n\n    if step > len(xs):\n        pass\n",
    "class M(nn.Module):\n    def forward(self, x):\n        if self.training:\n"
    "            return x\n",
    "for x in xs:\n    if isinstance(x, int) or hasattr(x, 'y'):\n        pass\n",
    "for i, x in enumerate(xs):\n    y = x[i][1:3, ::2]\n    total += 1\n",
    # What forward tests of its tensors' metadata and type: host, whatever they hold.
    "class M(nn.Module):\n    def forward(self, h):\n        h = h.abs()\n"
    "        if h.shape[0] >= 64 and h.dtype == torch.float16:\n            pass\n",
    "class M(nn.Module):\n    def forward(self, t):\n        if not torch.is_tensor(t):\n"
    "            t = torch.tensor([t])\n        return t\n",
])
def test_host_code_gives_no_signal(source: str) -> None:
    found = _hot(source)
    assert not found & (Signal.CONDITION | Signal.OUTPUT | Signal.DATA_DEPENDENT
                        | Signal.ACCUMULATE | Signal.READ), found


@pytest.mark.parametrize("test", ["h.abs().max() > 3", "h.sum() > 0 and h.shape[0] > 1",
                                  "torch.is_tensor(h) and h.item() > 0"])
def test_what_forward_computes_from_its_tensors_still_signals(test: str) -> None:
    source = (f"class M(nn.Module):\n    def forward(self, h):\n        if {test}:\n"
              "            pass\n")
    assert Signal.CONDITION in _hot(source)


_TOKENIZED = (
    "def encode(prompts, tokenizers, encoders):\n"
    "    for prompt, tokenizer, encoder in zip(prompts, tokenizers, encoders):\n"
    "        inputs = tokenizer(prompt, padding='max_length', return_tensors='pt')\n"
    "        ids = inputs.input_ids\n"
    "        longest = tokenizer(prompt, padding='longest', return_tensors=\"pt\").input_ids\n"
    "{rebind}"
    "        if longest.shape[-1] >= ids.shape[-1] and not {test}:\n"
    "            print('truncated')\n"
    "        encoder(ids.to('cuda'))\n"
)


def test_equal_of_tokenizer_output_is_a_host_test() -> None:
    # diffusers' SDXL encode_prompt: a loop over its two tokenizers compares CPU tensors.
    source = "import torch\n" + _TOKENIZED.format(rebind="", test="torch.equal(ids, longest)")
    assert not _hot(source) & (Signal.CONDITION | Signal.DATA_DEPENDENT)
    assert not process_source(source, "case.py", Settings(unsafe_fixes=True),
                              fix=False).findings


@pytest.mark.parametrize("rebind, test", [
    ("", "torch.equal(ids, longest.to('cuda'))"),  # a copy to the device
    ("", "torch.equal(ids, encoder(ids))"),  # a model's output
    ("", "torch.equal(input=ids, other=longest)"),  # the rules judge positional arguments
    ("        longest = longest.to('cuda')\n", "torch.equal(ids, longest)"),  # bound twice
    ("        ids: torch.Tensor = inputs.input_ids\n", "torch.equal(ids, longest)"),
    ("        ids = other = inputs.input_ids\n", "torch.equal(ids, longest)"),
    ("", "any(torch.equal(i, longest) for i in ids)"),  # another scope's name
    ("        ids = tokenizer(prompt, return_tensors='p' 't').input_ids\n",
     "torch.equal(ids, longest)"),
])
def test_equal_of_what_may_be_on_the_device_still_signals(rebind: str, test: str) -> None:
    source = "import torch\n" + _TOKENIZED.format(rebind=rebind, test=test)
    assert Signal.CONDITION in _hot(source)
    assert_same_with_and_without_prefilter(source, Settings(unsafe_fixes=True))


_STORE = (
    "import numpy as np\nimport torch\n{bind}\n"
    "def run(xs, buf: {annotation} = None):\n{rebind}"
    "    for i, x in enumerate(xs):\n        buf[:, i] = torch.relu(x.cuda())\n"
)


def test_a_store_into_a_tensor_is_no_store_into_a_host_buffer() -> None:
    # diffusers: `latents[:, :, i] = ...` into a tensor parameter, in a file with numpy.
    source = _STORE.format(bind="", annotation="torch.Tensor",
                           rebind="    buf = prepare(buf)\n    img = np.array(buf)\n")
    assert Signal.STORE not in _hot(source)


@pytest.mark.parametrize("bind, annotation, rebind", [
    ("", "torch.Tensor", "    buf = np.zeros((3, 3))\n"),
    ("", "np.ndarray", ""),  # an array by its annotation
    ("", "'np.ndarray'", "    buf = make()\n"),  # a helper that returns one
    ("class C:\n    grid = np.zeros(3)\n", "torch.Tensor", "    buf = C().grid\n"),
    ("", "torch.Tensor", "    buf, n = np.zeros((3, 3)), 3\n"),  # unpacked
    ("", "torch.Tensor", "    for buf in [np.zeros((3, 3))]:\n        pass\n"),  # iterated
    ("", "torch.Tensor", "    buf = torch.ones(3, 3).numpy()\n"),
    ("from numpy import zeros\n", "torch.Tensor", "    buf = zeros((3, 3))\n"),
    ("", "torch.Tensor", "    out = np.zeros((3, 3))\n    buf = out.T\n"),
])
def test_a_store_into_what_may_be_a_host_buffer_still_signals(bind: str, annotation: str,
                                                              rebind: str) -> None:
    source = _STORE.format(bind=bind + "\ndef make():\n    return np.zeros((3, 3))\n",
                           annotation=annotation, rebind=rebind)
    assert Signal.STORE in _hot(source)
    assert_same_with_and_without_prefilter(source, Settings(unsafe_fixes=True))


_CPU_STORE = (
    "import torch\n{outer}\ndef run(xs{parameter}):\n{bind}"
    "    for i, x in enumerate(xs):\n        buf[:, i] = torch.relu(x.cuda())\n"
)


@pytest.mark.parametrize("outer, parameter, bind", [
    ("", "", "    buf = torch.zeros(3, 3, device='cpu')\n"),  # a CPU tensor, bound once
    ("", "", "    buf = torch.zeros(3, 3)\n"),
    ("", "", "    src = torch.zeros(3, 3)\n    buf = src.float()\n"),
    # bound twice, but the second binding is declared global: judged by any binding
    ("buf = torch.zeros(3, 3)\n", "", "    global buf\n    buf = torch.zeros(3, 3)\n"),
])
def test_a_store_into_a_cpu_tensor_bound_once_signals(outer: str, parameter: str,
                                                      bind: str) -> None:
    source = _CPU_STORE.format(outer=outer, parameter=parameter, bind=bind)
    assert Signal.STORE in _hot(source)
    assert_same_with_and_without_prefilter(source, Settings(unsafe_fixes=True))


@pytest.mark.parametrize("parameter, bind", [
    # The rules ask for the value of the name's only binding (`single_binding_value`):
    # a parameter rebound to a CPU tensor, or a name bound twice, is no host buffer.
    (", buf: torch.Tensor = None", "    buf = torch.zeros(3, 3, device='cpu')\n"),
    (", buf=None", "    buf = torch.zeros(3, 3)\n"),
    ("", "    buf = torch.zeros(3, 3)\n    buf = buf.to(x.device)\n"),
    ("", "    buf = torch.zeros(3, 3)\n    buf += 1\n"),
    ("", "    buf = torch.zeros(3, 3)\n    for buf in [buf]:\n        pass\n"),
])
def test_a_store_into_a_name_bound_twice_is_no_store_into_a_host_buffer(
        parameter: str, bind: str) -> None:
    source = _CPU_STORE.format(outer="", parameter=parameter, bind=bind)
    assert Signal.STORE not in _hot(source)
    assert_same_with_and_without_prefilter(source, Settings(unsafe_fixes=True))


def test_too_deep_to_scan_means_everything() -> None:
    source = "for x in xs:\n    if " + "+".join(["i"] * 2500) + " > 0:\n        pass\n"
    assert scan(parse(source), source).hot == ALL_SIGNALS


@pytest.mark.parametrize("source", [
    "class M(L.LightningModule):\n    def training_step(self, batch):\n"
    "        loss = torch.relu(batch).sum()\n        self.log('loss', loss)\n",
    "xs = torch.ones(3, 4)\nfor x in xs:\n    y = torch.log(x)\n",
    "def f(writer, xs):\n    for x in xs:\n        writer.info(torch.relu(x))\n",
])
def test_what_is_no_output(source: str) -> None:
    assert Signal.OUTPUT not in _hot("import torch\n" + source)


@pytest.mark.parametrize(("source", "found"), [
    ("import torch\nfor x in xs:\n    i = torch.nonzero(x)\n", True),
    ("import torch\nfor x in xs:\n    i = torch.where(x > 0)\n", True),
    ("import torch\nfor x in torch.ones(3, 2):\n    i = x.unique()\n", True),
    ("for x in xs:\n    m = x > 0\n    i = m.nonzero()\n", True),
    ("import numpy as np\nfor x in xs:\n    i = np.unique(x)\n    j = np.where(x)\n", False),
    ("for x in xs:\n    i = x.labels.unique()\n", False),
])
def test_data_dependent_calls_need_torch_or_a_possible_tensor(source: str, found: bool) -> None:
    assert (Signal.DATA_DEPENDENT in _hot(source)) is found


_MODEL_HEAD = ("import logging\nimport torch\nlogger = logging.getLogger(__name__)\n\n"
               "class M(torch.nn.Module):\n")


@pytest.mark.parametrize("body, traced", [
    # An output call in forward, or in what forward calls (a method, a module function).
    ("    def forward(self, x):\n        logger.warning('x')\n        return x\n", True),
    ("    def forward(self, x):\n        return self._pad(x)\n"
     "    def _pad(self, x):\n        print('padded')\n        return x\n", True),
    ("    def forward(self, x):\n        return pad(x)\n"
     "def pad(x):\n    warnings.warn('padded')\n    return x\n", True),
    ("    def forward(self, x):\n        logger.log(logging.INFO, 'x')\n        return x\n",
     True),
    ("    def forward(self, x):\n        say('x')\n        return x\n"
     "from warnings import warn as say\n", True),
    # Logging only where forward does not reach (loading weights): nothing traced outputs.
    ("    def forward(self, x):\n        return x\n"
     "    def load(self, path):\n        logger.info('loading %s', path)\n", False),
    ("    def forward(self, x):\n        return torch.log(x) + x.log()\n", False),
])
def test_traced_output_needs_an_output_call_that_forward_reaches(body: str,
                                                                 traced: bool) -> None:
    source = _MODEL_HEAD + body
    assert (Signal.TRACED_OUTPUT in scan(parse(source), source).anywhere) is traced


@pytest.mark.parametrize(("event", "hot"), [
    ("on_batch_end", True), ("on_train_batch_start", True), ("on_step_end", True),
    ("on_iteration", True), ("on_epoch_end", False), ("on_train_end", False),
    ("on_batch_epoch_end", False),
])
def test_per_batch_events(event: str, hot: bool) -> None:
    from nosync_fix.analysis import _tables

    assert _tables.is_per_batch_event(event) is hot


@pytest.mark.parametrize("imports", ["import torch\n", "import numpy as np\nimport torch\n"])
def test_a_numpy_copy_of_an_unknown_value_is_a_read(imports: str) -> None:
    # diffusers' ONNX inpaint pipeline: `latents = f(...)` then `latents = latents.numpy()`
    # in the loop. NSY906 reports `.numpy()` of a value of unknown kind in a torch module
    # (arrays have no such method); the pre-filter took it for no read, and lost both
    # reports of that file.
    source = imports + ("\n\ndef run(xs):\n    for x in xs:\n        latents = f(x)\n"
                        "        latents = latents.numpy()\n")
    assert Signal.READ in _hot(source)
    assert_same_with_and_without_prefilter(source, Settings())
    findings = process_source(source, "t.py", Settings(), fix=False).findings
    assert [(f.code, f.line) for f in findings] == [("NSY906", 6 + imports.count("\n"))]
