"""Running a snippet before and after one rule's fix, on real tensors."""

from __future__ import annotations

import functools
import hashlib
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nosync_fix import fix_code


@dataclass
class Fixed:
    """A snippet and its fixed version, each executed in a fresh namespace."""

    before_source: str
    after_source: str
    before: dict[str, Any]
    after: dict[str, Any]


@functools.cache
def run_fixed(source: str, code: str, *, optimize: int = 0) -> Fixed:
    """Fix ``source`` with rule ``code`` only (unsafe fixes and all paths on), run both.

    Fails when the rule changed nothing: every caller tests a rewrite. Cached: property
    tests call it once per example.
    """
    source = textwrap.dedent(source)
    result = fix_code(source, select=[code], unsafe_fixes=True, all_paths=True)
    assert result.error is None, result.error
    assert result.fixed != source, f"{code} did not rewrite:\n{source}"
    return Fixed(source, result.fixed, _execute(source, optimize),
                 _execute(result.fixed, optimize))


def fixed_source(source: str, code: str) -> str:
    return fix_code(textwrap.dedent(source), select=[code], unsafe_fixes=True,
                    all_paths=True).fixed


_SNIPPETS = Path(tempfile.mkdtemp(prefix="nosync-snippets-"))


def _execute(source: str, optimize: int) -> dict[str, Any]:
    """Run ``source`` from a real file: torch.compile skips code it has no file for."""
    path = _SNIPPETS / f"snippet_{hashlib.sha1(source.encode()).hexdigest()[:16]}.py"
    path.write_text(source, encoding="utf-8")
    namespace: dict[str, Any] = {"__name__": "__snippet__", "__file__": str(path)}
    exec(compile(source, str(path), "exec", optimize=optimize), namespace)
    return namespace


def assert_same_tensor(after: Any, before: Any, *, ulps: int = 0) -> None:
    """Same dtype and shape, and values equal (NaN equal to NaN), or within ``ulps``
    units in the last place for float16/bfloat16, whose Python-number arithmetic runs
    in float32 (see the rule pages)."""
    import torch

    assert after.dtype == before.dtype, (after.dtype, before.dtype)
    assert after.shape == before.shape, (after.shape, before.shape)
    if ulps and before.dtype in (torch.float16, torch.bfloat16):
        eps = torch.finfo(before.dtype).eps
        torch.testing.assert_close(after, before, rtol=ulps * eps, atol=0.0, equal_nan=True)
    else:
        torch.testing.assert_close(after, before, rtol=0.0, atol=0.0, equal_nan=True)
