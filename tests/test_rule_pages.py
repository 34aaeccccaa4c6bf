"""Every rule's page: its sections exist, its examples run, agree, and match the fixer.

The contract for the ```python blocks under "## Example" and "## Use instead":

1. both run on the CPU in a fresh namespace (they import what they need);
2. they agree: the same printed output, and equal values for every variable both define
   (Python numbers of the same type, tensors close, containers element by element);
3. for a rule with a fix, running the fixer on the first block (that rule only, unsafe fixes
   and all paths on) gives exactly the second block.
"""

from __future__ import annotations

import contextlib
import io
import math
import sys
import types

import pytest

from nosync_fix import fix_code
from nosync_fix.rules import all_rules
from nosync_fix.rules.base import DOC_SECTIONS

torch = pytest.importorskip("torch")

RULES = all_rules()


def _run(code: str) -> tuple[dict, str]:
    namespace: dict = {"__name__": "__example__"}
    buffer = io.StringIO()
    torch.manual_seed(0)
    with contextlib.redirect_stdout(buffer):
        exec(compile(code, "<example>", "exec"), namespace)
        runtime = sys.modules.get("nosync_fix.runtime")
        if runtime is not None and hasattr(runtime, "flush"):
            runtime.flush()
    return namespace, buffer.getvalue()


def _comparable(namespace: dict) -> dict:
    return {
        name: value for name, value in namespace.items()
        if not name.startswith("_")
        and not isinstance(value, (types.ModuleType, types.FunctionType, type))
        and not callable(value)
    }


def _assert_same(name: str, before, after) -> None:
    if isinstance(before, torch.Tensor):
        assert isinstance(after, torch.Tensor), f"{name}: tensor became {type(after).__name__}"
        torch.testing.assert_close(after, before, msg=f"{name} differs")
        return
    assert type(after) is type(before), (
        f"{name}: {type(before).__name__} became {type(after).__name__}")
    if isinstance(before, float):
        assert math.isclose(after, before, rel_tol=1e-6, abs_tol=1e-9) or (
            math.isnan(after) and math.isnan(before)), f"{name}: {before} != {after}"
    elif isinstance(before, (list, tuple)):
        assert len(after) == len(before), f"{name}: lengths differ"
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            _assert_same(f"{name}[{i}]", b, a)
    elif isinstance(before, dict):
        assert after.keys() == before.keys(), f"{name}: keys differ"
        for key in before:
            _assert_same(f"{name}[{key!r}]", before[key], after[key])
    else:
        assert after == before, f"{name}: {before!r} != {after!r}"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_page_has_every_section(rule) -> None:
    sections = rule.doc_sections()
    missing = [s for s in DOC_SECTIONS if s not in sections]
    assert not missing, f"{rule.code} page lacks sections {missing}"
    assert rule.doc_example("Example"), f"{rule.code}: no python block under Example"
    assert rule.doc_example("Use instead"), f"{rule.code}: no python block under Use instead"
    assert rule.name and rule.summary and rule.fix_kind in ("safe", "unsafe", "safe/unsafe",
                                                            "none")


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_examples_run_and_agree(rule) -> None:
    before_code = rule.doc_example("Example")
    after_code = rule.doc_example("Use instead")
    before, before_out = _run(before_code)
    after, after_out = _run(after_code)
    assert after_out == before_out, "the two examples print different things"
    before_vars, after_vars = _comparable(before), _comparable(after)
    for name in sorted(before_vars.keys() & after_vars.keys()):
        _assert_same(name, before_vars[name], after_vars[name])


@pytest.mark.parametrize("rule", [r for r in RULES if r.fix_kind != "none"],
                         ids=lambda r: r.code)
def test_fixer_turns_example_into_use_instead(rule) -> None:
    before_code = rule.doc_example("Example")
    result = fix_code(before_code, select=[rule.code], unsafe_fixes=True, all_paths=True)
    assert result.error is None, result.error
    assert result.fixed == rule.doc_example("Use instead")


def test_rule_codes_come_from_module_names_without_importing_them() -> None:
    from nosync_fix.rules import all_rules, rule_codes, rules_with_codes

    assert rule_codes() == tuple(rule.code for rule in all_rules())
    for rule in all_rules():
        assert rule.__module__.rpartition(".")[2].startswith(rule.code.lower() + "_")
    assert rules_with_codes(("NSY901", "NSY201")) == tuple(
        rule for rule in all_rules() if rule.code in ("NSY201", "NSY901"))
