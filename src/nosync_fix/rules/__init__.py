"""The rule registry: every module in this package that defines Rule subclasses.

Rules are found by importing the modules of this package, so adding a rule is
adding a module; nothing else needs editing.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from .base import Report, Rule, RuleContext

__all__ = ["Report", "Rule", "RuleContext", "all_rules", "rule_by_code"]


@cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every registered rule, sorted by code."""
    found: dict[str, type[Rule]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, Rule) and value is not Rule
                    and value.code and value.__module__ == module.__name__):
                if value.code in found and found[value.code] is not value:
                    raise RuntimeError(f"two rules share the code {value.code}")
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code.upper():
            return rule
    return None
