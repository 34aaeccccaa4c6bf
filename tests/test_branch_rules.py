"""Which rule owns a device branch, and why a fix is safe, unsafe or absent.

The golden cases pin the rewrites; these tests pin the judgement behind them: each
edge where torch.where differs from an `if` makes the fix unsafe with that reason,
and the fix is safe only when every one of them is ruled out.
"""

from __future__ import annotations

import textwrap

import pytest

from nosync_fix import check_code

RULES = ["NSY101", "NSY102", "NSY103", "NSY104"]


def _findings(body: str, signature: str = "x: torch.Tensor, t: torch.Tensor, k: float",
              decorator: str = ""):
    code = f"import torch\n\n\n{decorator}def f({signature}):\n" + textwrap.indent(
        textwrap.dedent(body).strip(), "    ") + "\n"
    return check_code(code, select=RULES, all_paths=True)


def _one(body: str, **kwargs):
    found = _findings(body, **kwargs)
    assert len(found) == 1, [f.message for f in found]
    return found[0]


def test_proven_where_is_safe() -> None:
    finding = _one("""
        y = x.float()
        if y.abs().max() > 2:
            y = y * 0.5
        return y
    """)
    assert finding.code == "NSY101" and finding.fix.applicability.value == "safe"
    assert "unsafe" not in finding.message


@pytest.mark.parametrize(("body", "reason"), [
    ("y = x.float()\nif y > 2:\n    y = y * 0.5\nreturn y",
     "not known to be a single value"),
    ("y = x.float()\nif y.sum().item() > 0.1:\n    y = y * 0.5\nreturn y",
     "rounds the threshold"),
    ("y = x.float()\nif y.sum() > 0:\n    y = y / y.sum()\nreturn y",
     "`y / y.sum()` also runs on the path"),
    ("y = x.float()\nif torch.isnan(y).any():\n    y = torch.zeros_like(y)\nreturn y",
     "depends on different tensors"),
    ("if x.sum() > 0:\n    x = x * 0.5\nreturn x",
     "`x` is not known to be a floating-point tensor"),
    ("y = x.float()\nif y.sum() > 0:\n    y = y * 2\ny.add_(1)\nreturn y",
     "updated in place"),
    ("if t.item() > 0:\n    x = x + 1\nreturn x",
     "not known to be a single value"),
])
def test_each_edge_makes_the_fix_unsafe(body: str, reason: str) -> None:
    finding = _one(body)
    assert finding.code == "NSY101"
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert reason in finding.message


@pytest.mark.parametrize(("body", "reason"), [
    ("s = 0.0\nif x.sum() > 0:\n    s = x.sum()\nreturn s", "may not hold a tensor"),
    ("if x.sum() > 0:\n    y = x * 2\nreturn y", "not assigned before"),
    ("if x.sum() > 0 and k > 1:\n    x = x * 2\nreturn x", "mixes host and device"),
    ("if k > 1 or x.sum() > 0:\n    x = x * 2\nreturn x", "mixes host and device"),
    ("m = x > 0\nif x.sum() > 0:\n    m = x * 2.0\nreturn m", "bool or a float"),
    ("y = t.long()\nz = x.float()\nif x.sum() > 0:\n    z = y\nreturn z",
     "a float or an int tensor"),
    ("lr = torch.ones(())\nif x.sum() > 0:\n    lr = 0.1\nreturn lr",
     "does not assign a tensor"),
    ("if (v := x.sum().item()) > 0:\n    x = x * 2\nreturn x", "binds a host value"),
    ("if abs(x.sum().item()) > 1:\n    x = x * 2\nreturn x", "computes on the host"),
])
def test_no_fix_where_where_would_change_the_program(body: str, reason: str) -> None:
    finding = _one(body)
    assert finding.code == "NSY101" and finding.fix is None
    assert reason in finding.message


@pytest.mark.parametrize(("body", "idiom"), [
    ("for _ in range(3):\n    if torch.isnan(x).any():\n        continue\n    x = x * 2\nreturn x",
     "GradScaler"),
    ("for _ in range(3):\n    x = x * 2\n    if x.sum() > 10:\n        break\nreturn x",
     "every N steps"),
    ("if not torch.isfinite(x).all():\n    x = x * 2\n    raise ValueError('bad')\nreturn x",
     "_assert_async"),
    ("if x.sum() > 0:\n    x = x + torch.randn(3)\nreturn x", "random stream"),
    ("if x.sum() > 0:\n    x.mul_(2)\nreturn x", "copy_(torch.where"),
    ("if x.sum() > 0:\n    print('positive')\nreturn x", "deferred logging"),
])
def test_report_only_branches_name_the_idiom(body: str, idiom: str) -> None:
    finding = _one(body)
    assert finding.code == "NSY103" and finding.fix is None
    assert idiom in finding.message


CLIP = """
    norm = x.norm()
    if norm > k:
        scale = k / norm
        x = x * scale
    return x
"""


def test_cond_for_dependent_statements_names_its_costs() -> None:
    finding = _one(CLIP, decorator="@torch.compile\n")
    assert finding.code == "NSY102" and finding.fix.applicability.value == "unsafe"
    assert "Inductor still reads the predicate on the host" in finding.message
    assert "same structure, shapes and dtypes" in finding.message
    assert "(`k`) must not change between calls" in finding.message


def test_cond_in_eager_code_names_the_eager_cost() -> None:
    """Issue 20: eager torch.cond traces its branches on every call (torchtune's KL loss:
    forward and backward ~100x slower), so code the file does not compile gets no fix."""
    finding = _one(CLIP)
    assert finding.code == "NSY102" and finding.fix is None
    assert "in eager mode torch.cond traces its branches on every call" in finding.message


def test_device_while_is_reported_at_its_test() -> None:
    finding = _one("while x.abs().max() > k:\n    x = x * 0.5\nreturn x")
    assert finding.code == "NSY104" and finding.fix is None
    assert "torch.while_loop" in finding.message


@pytest.mark.parametrize("body", [
    "if x.shape[0] > 0:\n    x = x * 2\nreturn x",
    "if x.numel():\n    x = x * 2\nreturn x",
    "if t is None:\n    t = x\nreturn t",
    "if len(x) > 3:\n    x = x * 2\nreturn x",
    "if k > 1:\n    x = x * 2\nreturn x",
    "while x.dim() > 1:\n    x = x.sum(0)\nreturn x",
    "if not torch.compiler.is_compiling():\n    if x.sum() > 0:\n        x = x * 2\nreturn x",
    "best = float('inf')\nfor _ in range(3):\n    if x.sum().item() < best:\n"
    "        best = x.sum().item()\nreturn best",
])
def test_host_conditions_and_deliberate_code_are_not_findings(body: str) -> None:
    assert _findings(body) == []


def test_each_device_if_gets_exactly_one_finding() -> None:
    found = _findings("""
        if x.sum() > 0:
            x = x * 2
        elif x.sum() < -1:
            x = x - 1
        else:
            x = x + 1
        return x
    """)
    assert [f.code for f in found] == ["NSY101"]


@pytest.mark.parametrize(("setup", "fixed"), [
    ("net = Net()\nnet.compile()\n", True),
    ("net = Net().to('cpu').eval()\nfast = torch.compile(net, mode='max-autotune')\n", True),
    ("fast = torch.compile(Net())\n", True),
    ("net = Net()\nfast = torch.compile(other)\n", False),
    ("net = Net()\nnet.eval()\n", False),
    # issue 20: an instance left eager, or a compile that may not run
    ("fast = torch.compile(Net())\nslow = Net()\n", False),
    ("net = Net()\nif use_compile:\n    net = torch.compile(net)\n", False),
    ("class Owner:\n    def __init__(self):\n        self.net = Net()\n\n"
     "    def compile_it(self):\n        self.net = torch.compile(self.net)\n", False),
    ("class Owner:\n    def __init__(self):\n        self.net = Net()\n"
     "        self.net = torch.compile(self.net)\n", True),
    ("if __name__ == '__main__':\n    net = Net()\n    net = torch.compile(net)\n", True),
    ("nets = [torch.compile(Net()) for _ in range(2)]\n", True),
    ("nets = [Net() for _ in range(2)]\nfast = torch.compile(nets[0])\n", False),
])
def test_cond_in_forward_of_a_module_the_file_compiles(setup: str, fixed: bool) -> None:
    code = "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x: " \
           "torch.Tensor):\n" + textwrap.indent(textwrap.dedent(CLIP).strip(), "        ") \
           .replace("k", "2.0") + "\n\n\n" + setup
    found = check_code(code, select=RULES, unsafe_fixes=True)
    assert [f.code for f in found] == ["NSY102"]
    assert (found[0].fix is not None) is fixed, found[0].message
