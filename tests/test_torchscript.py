"""Code that TorchScript compiles is never rewritten: the fixed file still scripts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from nosync_fix import fix_code  # noqa: E402

CASE = Path(__file__).resolve().parents[1] / "golden" / "NSY401" / "torchscript.in.py"


def _load(path: Path, source: str):  # type: ignore[no-untyped-def]
    """Import ``source`` from a real file: TorchScript reads functions' source files."""
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_fixed_file_still_scripts_and_runs(tmp_path: Path) -> None:
    result = fix_code(CASE.read_text(encoding="utf-8"), filename="case.py", unsafe_fixes=True)
    assert result.fixed != result.original  # the undecorated function is fixed
    module = _load(tmp_path / "fixed_case.py", result.fixed)  # scripts at import
    maps = torch.rand(3, 4)
    for name in ("decode", "scripted", "eager"):
        assert torch.equal(getattr(module, name)(maps), maps * 2)


def test_the_rewrite_is_what_torchscript_rejects(tmp_path: Path) -> None:
    # Guards the premise of the rule: were TorchScript to accept `if __debug__:`, the
    # exception above would be needless.
    source = ("import torch\n\n@torch.jit.script\ndef f(x: torch.Tensor) -> torch.Tensor:\n"
              "    if __debug__:\n        torch._assert_async((x >= 0).all())\n    return x\n")
    with pytest.raises(Exception, match="python value of type 'bool'"):
        _load(tmp_path / "rewrite_case.py", source)
