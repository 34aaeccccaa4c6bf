"""The conversions of a ``%``-format template, for the rules and the runtime alike.

``"step %d loss %.4f" % (step, loss)`` calls ``int()`` on ``step`` and
``float()`` on ``loss``; ``%s`` calls ``str()``. Whether a tensor argument can
wait for a flush depends on which: a number formats the same from a host copy,
``tensor(...)`` text does not. Standard library only (the rules must not import
torch, the runtime must not import the fixer).
"""

from __future__ import annotations

import re

#: Conversions that call ``float()`` on their argument, and those that call ``int()``.
FLOAT_CONVERSIONS = frozenset("eEfFgG")
INT_CONVERSIONS = frozenset("diu")

# (key with its parentheses, width, precision, type); a "%" type takes no argument.
_SPEC = re.compile(r"%(\([^)]*\))?[#0 +\-]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.?)", re.S)


def conversions(template: str) -> dict[int | str, str] | None:
    """The conversion letter for each argument, by position or by ``%(key)`` name.

    None when a width or precision is ``*`` (it takes an argument of its own).
    """
    found: dict[int | str, str] = {}
    position = 0
    # findall, not finditer: it returns plain tuples, which torch.compile can fold.
    for key, width, precision, kind in _SPEC.findall(template):
        if kind == "%":
            continue
        if width == "*" or precision == "*":
            return None
        if key:
            found[key[1:-1]] = kind
        else:
            found[position] = kind
            position += 1
    return found


def is_numeric(conversion: str | None) -> bool:
    """Whether the conversion formats a number (``float()`` or ``int()`` of the argument)."""
    return conversion is not None and conversion != "" and (
        conversion in FLOAT_CONVERSIONS or conversion in INT_CONVERSIONS)
