"""Tensors certainly in host memory are not "device values" (issue 20): tokenizer output,
``device="cpu"`` factories and ``.cpu()`` copies get no sync finding."""

from __future__ import annotations

import textwrap

import pytest

from nosync_fix import check_code, fix_code

LOOP = """
import torch


def run(model, loader, tokenizer, optimizer):
    for x, text in loader:
        out = model(x)
        loss = out.sum()
{body}
        loss.backward()
        optimizer.step()
"""


def _codes(body: str) -> list[str]:
    code = LOOP.format(body=textwrap.indent(textwrap.dedent(body).strip(), " " * 8))
    return [f.code for f in check_code(code, unsafe_fixes=True)]


@pytest.mark.parametrize("body", [
    'ids = tokenizer(text, return_tensors="pt").input_ids\n'
    'if not torch.equal(ids, ids[:, :77]):\n    print("long")',
    'ids = tokenizer(text, return_tensors="pt")["input_ids"]\nassert (ids >= 0).all()',
    'ids = tokenizer.encode(text, return_tensors="pt")\nif (ids == 0).any():\n    print("pad")',
    'counts = torch.zeros(3, device="cpu")\nif counts.sum() > 0:\n    print("seen")',
    'host = out.detach().cpu()\nassert torch.isfinite(host).all()',
    'host = out.detach().to("cpu")\nif host.max() > 1:\n    print("big")',
    # data that holds no tensor: a list, an attribute nothing is known of (whisper's
    # `result.tokens`), the legacy constructors, torch.as_tensor, torch.from_numpy
    'tokens = torch.tensor(text.tokens)\nif tokens[-1].item() > 0:\n    print("end")',
    'flags = torch.Tensor(text.flags)\nif flags.mean().item() > 0.5:\n    print("most")',
    'ids = torch.LongTensor([1, 2])\nassert (ids > 0).all()',
    'ids = torch.as_tensor([1, 2])\nassert (ids > 0).all()',
    'ids = torch.from_numpy(text.array)\nassert (ids > 0).all()',
    # an annotated binding is followed as a plain one; a length reads no device
    'tokens = torch.tensor(text.tokens)\nflags: torch.Tensor = tokens.ge(5)\n'
    'if flags[-1]:\n    print("stamp")',
    'tokens = torch.tensor(text.tokens)\nif len(tokens) > 0 and tokens[-1].item() != 5:\n'
    '    print("stamp")',
    # the elements of zip's and enumerate's iterables, and a cast, stay on the host
    'host = loss.detach().cpu()\nfor a, b in zip(host, host):\n    if a > b:\n'
    '        print("row")',
    'host = loss.detach().cpu()\nfor i, a in enumerate(host):\n    if a > 0:\n'
    '        print("row")',
    'host = loss.detach().cpu().to(torch.long)\nif host > 0:\n    print("long")',
    'host = loss.detach().cpu().to(dtype=loss.dtype)\nif host > 0:\n    print("cast")',
])
def test_cpu_tensors_get_no_finding(body: str) -> None:
    # NSY903 reports the copy `.cpu()` itself (it waits); nothing reports the reads after it.
    assert [c for c in _codes(body) if c != "NSY903"] == []


@pytest.mark.parametrize(("body", "code"), [
    ('ids = tokenizer(text, return_tensors="pt").input_ids.to(x.device)\n'
     'assert torch.equal(ids, ids)', "NSY401"),
    ('if (loss > 0).any():\n    print("positive")', "NSY103"),
    ("assert torch.isfinite(loss)", "NSY401"),
    ('counts = torch.zeros(3, device=x.device)\nif counts.sum() > 0:\n    print("seen")',
     "NSY103"),
    # torch.tensor of a tensor keeps its device; of a list of tensors it reads each one
    ('copy = torch.tensor(loss)\nif copy.sum() > 0:\n    print("seen")', "NSY103"),
    ('pair = torch.tensor([loss, loss])\nif pair.sum() > 0:\n    print("seen")', "NSY103"),
    ('pair = [loss, loss * 2]\nfirst = torch.tensor(pair)\nif first.sum() > 0:\n'
     '    print("seen")', "NSY103"),
    ('flags: torch.Tensor = loss.ge(5)\nif flags.any():\n    print("seen")', "NSY103"),
    # torch.as_tensor shares a tensor it is given: unknown data may be one
    ('ids = torch.as_tensor(text.ids)\nassert (ids > 0).all()', "NSY401"),
    ('both = loss * 2\nfor a, b in zip(both, both):\n    if a > b:\n        print("row")',
     "NSY103"),
    ('both = loss * 2\nfor i, a in enumerate(both):\n    if a > 0:\n        print("row")',
     "NSY103"),
])
def test_device_tensors_still_get_one(body: str, code: str) -> None:
    assert _codes(body) == [code]


@pytest.mark.parametrize("cast", ["to(loss)", "to(torch.long, device=x.device)"])
def test_a_cast_that_may_move_the_tensor_leaves_it_a_device_value(cast: str) -> None:
    # `.to(other)` takes other's device; a device argument moves it: no longer the host's
    body = f'host = loss.detach().cpu().{cast}\nif host > 0:\n    print("moved")'
    assert "NSY103" in _codes(body)


def test_long_prompts_still_run_after_the_fixer() -> None:
    """SDXL's check: ids of different shapes. The fixer leaves it alone, so a prompt over
    77 tokens still takes the branch instead of raising in `==`."""
    torch = pytest.importorskip("torch")
    source = textwrap.dedent("""
        import torch


        def truncated(tokenizer, prompts):
            found = []
            for prompt in prompts:
                ids = tokenizer(prompt, max_length=77, return_tensors="pt").input_ids
                untruncated_ids = tokenizer(prompt, return_tensors="pt").input_ids
                if untruncated_ids.shape[-1] >= ids.shape[-1] and not torch.equal(
                    ids, untruncated_ids
                ):
                    found.append(prompt)
            return found
    """)
    fixed = fix_code(source, unsafe_fixes=True)
    assert fixed.fixed == source and not fixed.findings

    class Ids:
        def __init__(self, ids):
            self.input_ids = ids

    def tokenizer(prompt, max_length=None, return_tensors=None):
        ids = torch.arange(len(prompt.split())).unsqueeze(0)
        return Ids(ids[:, :max_length] if max_length else ids)

    namespace: dict = {}
    exec(compile(fixed.fixed, "fixed", "exec"), namespace)
    long_prompt = " ".join(["word"] * 100)
    assert namespace["truncated"](tokenizer, ["short prompt", long_prompt]) == [long_prompt]


REBOUND = textwrap.dedent("""
    import torch


    def truncated(tokenizer, prompts, device):
        found, moved = [], []
        for prompt in prompts:
            ids = tokenizer(prompt, max_length=8, return_tensors="pt").input_ids
            untruncated_ids = tokenizer(prompt, return_tensors="pt").input_ids
            if untruncated_ids.shape[-1] >= ids.shape[-1] and not torch.equal(
                ids, untruncated_ids
            ):
                found.append(prompt)
            ids = ids.to(device)
            moved.append(ids)
        return found, moved
""")


def test_ids_moved_after_the_check_are_still_host_ids() -> None:
    """audioldm2's form (issue 20): the tokenizer's ids are compared on the CPU, then the
    name is bound again to the ids moved to the device. The binding that reaches the
    comparison is the tokenizer's: no finding, no rewrite, and the code runs as before."""
    torch = pytest.importorskip("torch")
    fixed = fix_code(REBOUND, unsafe_fixes=True, all_paths=True)
    assert fixed.fixed == REBOUND
    assert [f.code for f in fixed.findings if f.code in ("NSY504", "NSY103")] == []

    class Ids:
        def __init__(self, ids):
            self.input_ids = ids

    def tokenizer(prompt, max_length=None, return_tensors=None):
        ids = torch.arange(len(prompt.split())).unsqueeze(0)
        return Ids(ids[:, :max_length] if max_length else ids)

    namespace: dict = {}
    exec(compile(fixed.fixed, "fixed", "exec"), namespace)
    long_prompt = " ".join(["word"] * 20)
    found, moved = namespace["truncated"](tokenizer, ["a short one", long_prompt], "cpu")
    assert found == [long_prompt] and [m.shape[-1] for m in moved] == [3, 8]
    moved_first = REBOUND.replace("        if untruncated_ids",
                                  "        ids = ids.to(device)\n        if untruncated_ids")
    assert moved_first != REBOUND
    assert [f.code for f in check_code(moved_first, unsafe_fixes=True, all_paths=True)
            if f.code == "NSY504"] == ["NSY504"]
