"""The read rules (NSY401-NSY504, NSY901-NSY905): pages, messages and who reports what."""

from __future__ import annotations

import collections
import textwrap
from pathlib import Path

import pytest

from nosync_fix import check_code
from nosync_fix.rules import rule_by_code

CODES = ["NSY401", "NSY501", "NSY502", "NSY503", "NSY504", "NSY901", "NSY902", "NSY903",
         "NSY904", "NSY905"]
GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def _findings(source: str, codes=CODES, all_paths: bool = True):
    return check_code(textwrap.dedent(source), select=codes, all_paths=all_paths,
                      unsafe_fixes=True)


@pytest.mark.parametrize("code", CODES)
def test_the_page_example_is_found_on_a_hot_path_and_the_alternative_is_clean(code) -> None:
    rule = rule_by_code(code)
    example = check_code(rule.doc_example("Example"), select=[code])
    assert [f.code for f in example] and all(f.code == code for f in example)
    assert check_code(rule.doc_example("Use instead"), select=[code]) == []


@pytest.mark.parametrize("path", sorted(p for code in CODES
                                        for p in (GOLDEN / code).glob("*.in.py")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_node_is_reported_by_two_read_rules(path: Path) -> None:
    positions = collections.defaultdict(list)
    for finding in _findings(path.read_text(encoding="utf-8")):
        positions[finding.line, finding.column].append(finding.code)
    assert not {k: v for k, v in positions.items() if len(v) > 1}


def test_reads_in_compiled_functions_go_to_the_rule_that_owns_them() -> None:
    source = (GOLDEN / "NSY905" / "owned.in.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    found = {(lines[f.line - 1].strip(), f.code) for f in _findings(source)}
    assert found == {
        ("weight = loss.item()", "NSY501"),
        ("ppl = math.exp(loss.item())", "NSY502"),
        ("assert loss.item() >= 0", "NSY401"),
        ("buffer = torch.zeros(int(loss.item()))", "NSY902"),
        ("count = torch.count_nonzero(y).item() * x", "NSY503"),
        ("hist_buffer[i] = loss.item()", "NSY903"),
    }


def test_synchronize_messages_tell_timing_apart() -> None:
    timing, plain = _findings("""
        import time
        import torch

        def bench(model, x):
            for _ in range(3):
                t0 = time.perf_counter()
                model(x)
                torch.cuda.synchronize()
                print(time.perf_counter() - t0)

        def train(model, x):
            for _ in range(3):
                model(x)
                torch.cuda.synchronize()
    """, ["NSY901"])
    assert "legitimate here only if it makes the timing" in timing.message
    assert "torch.cuda.Event(enable_timing=True)" in timing.message
    assert "nothing here measures time: remove it" in plain.message


def test_synchronize_messages_fit_periodic_and_distributed_code() -> None:
    source = (GOLDEN / "NSY901" / "periodic_and_distributed.in.py").read_text(encoding="utf-8")
    periodic, distributed = _findings(source, ["NSY901"])
    assert "whenever it runs" in periodic.message and "every step" not in periodic.message
    assert "every step" in distributed.message
    assert "may order work with other processes" in distributed.message
    assert "nothing here measures time: remove it" not in distributed.message


def test_shape_messages_name_the_alternative() -> None:
    findings = _findings("""
        import torch

        def step(x: torch.Tensor, n: torch.Tensor, names):
            for _ in range(3):
                a = torch.zeros(int(n))
                b = x[n.item()]
                c = names[n.item()]
                d = x[: n.item()]
                for _ in range(n.item()):
                    pass
    """, ["NSY902"])
    messages = [f.message for f in findings]
    assert "pad to a static bound" in messages[0] and "torch._check" in messages[0]
    assert "index with the tensor itself" in messages[1]
    assert "indexes a Python container" in messages[2]
    assert "slice's length" in messages[3]
    assert "loop's trip count" in messages[4]


def test_report_only_rules_offer_no_fix() -> None:
    for code in ("NSY901", "NSY902", "NSY903", "NSY904", "NSY905"):
        rule = rule_by_code(code)
        assert rule.fix_kind == "none"
        assert all(f.fix is None for f in _findings(rule.doc_example("Example"), [code]))


JAX_SCRIPT = """
    {imports}
    import jax
    import numpy as np


    def train(update, state, batches, writer):
        for step, batch in enumerate(batches):
            state, loss = update(state, batch)
            writer.add_scalar("loss", loss.item(), step)
"""


@pytest.mark.parametrize(("imports", "reported"), [
    # TensorBoard's writer from torch beside JAX: `loss` is a JAX array, not a tensor
    ("from torch.utils.tensorboard import SummaryWriter", False),
    ("import torch.utils.tensorboard as tensorboard", False),
    # torch itself imported: the read may be of a tensor, and is reported
    ("import torch\nfrom torch.utils.tensorboard import SummaryWriter", True),
    ("import torch.utils.tensorboard", True),  # binds `torch`
])
def test_torch_imported_only_for_tensorboard_beside_jax_is_no_torch_module(
        imports: str, reported: bool) -> None:
    source = JAX_SCRIPT.replace("{imports}", imports.replace("\n", "\n    "))
    findings = check_code(textwrap.dedent(source), select=["NSY906"])
    assert bool(findings) is reported, findings
