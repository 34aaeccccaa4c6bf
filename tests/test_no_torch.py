"""The fixer never imports torch: a lint job must not need a 2 GB install."""

from __future__ import annotations

import subprocess
import sys


def _imported_modules(code: str) -> str:
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                         capture_output=True, text=True, check=True)
    return out.stderr


def test_cli_help_imports_no_torch() -> None:
    log = _imported_modules("import sys; sys.argv=['nosync-fix','--help']\n"
                            "from nosync_fix.cli import main\n"
                            "try:\n    main()\nexcept SystemExit:\n    pass")
    assert "nosync_fix.cli" in log
    assert " torch" not in log and "|   torch" not in log


def test_fixing_code_imports_no_torch() -> None:
    code = ("import sys\nfrom nosync_fix import fix_code\n"
            "src = ('import torch\\nt = 0.0\\nfor x in xs:\\n'\n"
            "       '    t += torch.ones(1).sum().item()\\n')\n"
            "fix_code(src)\nassert 'torch' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_module_outside_runtime_and_verify_avoids_torch() -> None:
    code = ("import pkgutil, sys, importlib, nosync_fix\n"
            "for m in pkgutil.walk_packages(nosync_fix.__path__, 'nosync_fix.'):\n"
            "    if m.name.startswith(('nosync_fix.runtime', 'nosync_fix.verify')):\n"
            "        continue\n"
            "    if m.name == 'nosync_fix.__main__':\n"
            "        continue\n"
            "    importlib.import_module(m.name)\n"
            "assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_runtime_does_not_load_the_fixer() -> None:
    """Rewritten training code imports nosync_fix.runtime: it must not pay for LibCST."""
    code = ("import sys\nfrom nosync_fix.runtime import deferred_print, fmt, item\n"
            "assert 'libcst' not in sys.modules and 'nosync_fix.engine' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
