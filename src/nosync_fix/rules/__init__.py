"""The rule registry: every module in this package that defines Rule subclasses.

Rules are found by importing the modules of this package, so adding a rule is
adding a module (named after its code: ``nsy201_accumulate_on_device``); nothing
else needs editing. Their codes are known from the module names alone
(:func:`rule_codes`), so that choosing rules, and a run answered from the cache,
import neither the rules nor LibCST.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Report, Rule, RuleContext

__all__ = ["Report", "Rule", "RuleContext", "all_rules", "rule_by_code", "rule_codes",
           "rules_with_codes"]

_RULE_MODULE = re.compile(r"nsy(\d{3})_\w+")


def __getattr__(name: str) -> Any:
    # The rule base classes import LibCST: loaded when first asked for.
    if name in ("Report", "Rule", "RuleContext"):
        from . import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _rule_modules() -> list[str]:
    return [info.name for info in pkgutil.iter_modules(__path__)
            if not info.name.startswith("_") and info.name != "base"]


@cache
def rule_codes() -> tuple[str, ...]:
    """Every registered rule's code, sorted, from the names of the modules alone."""
    return tuple(sorted(f"NSY{_RULE_MODULE.fullmatch(name)[1]}"  # type: ignore[index]
                        for name in _rule_modules()))


@cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every registered rule, sorted by code."""
    from .base import Rule

    found: dict[str, type[Rule]] = {}
    for name in _rule_modules():
        module = importlib.import_module(f"{__name__}.{name}")
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, Rule) and value is not Rule
                    and value.code and value.__module__ == module.__name__):
                if value.code in found and found[value.code] is not value:
                    raise RuntimeError(f"two rules share the code {value.code}")
                if not name.startswith(f"{value.code.lower()}_"):
                    raise RuntimeError(f"rule {value.code} is in module {name}, which is not "
                                       f"named after its code")
                found[value.code] = value
    if tuple(sorted(found)) != rule_codes():
        raise RuntimeError("every rule module must define the one rule its name gives")
    return tuple(found[code] for code in sorted(found))


@cache
def rules_with_codes(codes: tuple[str, ...]) -> tuple[type[Rule], ...]:
    """The registered rules with these codes, sorted by code."""
    return tuple(rule for rule in all_rules() if rule.code in codes)


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code.upper():
            return rule
    return None
