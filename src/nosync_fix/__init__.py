"""nosync-fix: remove host reads of device values from PyTorch code.

The library API, for editors and other refactoring tools::

    from nosync_fix import fix_code, check_code, fix_paths

    result = fix_code(source, filename="train.py")
    result.fixed          # the rewritten source
    result.findings       # what is left: Finding(code, message, line, column, ..., fix)
    result.diff           # a unified diff

    for finding in check_code(source):
        print(finding.code, finding.line, finding.message, finding.fix)

    for outcome in fix_paths(["src/"], write=False):
        print(outcome.filename, outcome.changed, outcome.error)

``fix_paths`` reads the project's ``pyproject.toml`` as the command line does;
``fix_code`` and ``check_code`` see no file system and use the defaults (or the
``settings`` given, e.g. ``load_settings(Path("pyproject.toml"))``).

Nothing here imports torch.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import ConfigError, Settings, load_settings
    from .findings import Applicability, Edit, FileError, Finding, Fix, FixResult
    from .runner import FileOutcome

__version__ = "0.1.0"

__all__ = [
    "Applicability",
    "ConfigError",
    "Edit",
    "FileError",
    "FileOutcome",
    "Finding",
    "Fix",
    "FixResult",
    "Settings",
    "__version__",
    "check_code",
    "fix_code",
    "fix_paths",
    "load_settings",
]

# The names are loaded on first use: code rewritten by nosync-fix imports
# nosync_fix.runtime, and that must not pull in LibCST and the whole fixer.
_LAZY = {
    "ConfigError": "config", "Settings": "config", "load_settings": "config",
    "Applicability": "findings", "Edit": "findings", "FileError": "findings",
    "Finding": "findings", "Fix": "findings", "FixResult": "findings",
    "FileOutcome": "runner",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _settings(settings: Settings | None, select: Iterable[str] | None,
              ignore: Iterable[str] | None, unsafe_fixes: bool | None,
              all_paths: bool | None = None) -> Settings:
    from .config import Settings

    base = settings or Settings()
    return base.with_overrides(
        select=tuple(select) if select is not None else None,
        ignore=tuple(ignore) if ignore is not None else None,
        unsafe_fixes=unsafe_fixes,
        all_paths=all_paths,
    ).validate()


def fix_code(
    source: str | bytes,
    *,
    filename: str = "<string>",
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    unsafe_fixes: bool = False,
    all_paths: bool | None = None,
    settings: Settings | None = None,
) -> FixResult:
    """Fix ``source`` in memory.

    Returns a :class:`FixResult` with the original and fixed source, the findings
    that remain (each with its ``Fix`` when one exists), the findings that were
    fixed, and a unified diff. A source that cannot be parsed comes back
    unchanged with ``error`` set; this function does not raise for bad input.
    Raises :class:`ConfigError` for unknown rule codes.
    """
    from .engine import process_source

    chosen = _settings(settings, select, ignore, unsafe_fixes, all_paths)
    return process_source(source, filename, chosen, fix=True)


def check_code(
    source: str | bytes,
    *,
    filename: str = "<string>",
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    unsafe_fixes: bool = False,
    all_paths: bool | None = None,
    settings: Settings | None = None,
) -> list[Finding]:
    """The findings in ``source``, each with the fix it offers (edits included).

    Raises :class:`ValueError` when the source cannot be parsed.
    """
    from .engine import process_source

    chosen = _settings(settings, select, ignore, unsafe_fixes, all_paths)
    result = process_source(source, filename, chosen, fix=False)
    if result.error is not None:
        raise ValueError(f"{filename}: {result.error.message}")
    return list(result.findings)


def fix_paths(
    paths: Sequence[str],
    *,
    write: bool | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    unsafe_fixes: bool | None = None,
    settings: Settings | None = None,
    jobs: int | None = None,
    config: str | os.PathLike[str] | None = None,
    isolated: bool = False,
) -> list[FileOutcome]:
    """Fix every Python file under ``paths``; write them back when ``write`` is true.

    The settings are those the command line uses: ``[tool.nosync-fix]`` of the
    nearest ``pyproject.toml`` at or above the folder the paths have in common, or
    of the file ``config`` names; none with ``isolated``. ``settings``, when given,
    is used as it is instead (no file is read). ``select``, ``ignore`` and
    ``unsafe_fixes`` override either. ``write`` defaults to the configuration's
    ``fix`` (true unless set): with ``fix = false`` the files are only checked,
    and ``write=False`` computes the fixes without writing them.

    Returns one :class:`FileOutcome` per file (or per path that failed), with the
    :class:`FixResult` and whether the file was written. Raises
    :class:`ConfigError` for a broken configuration or unknown rule codes.
    """
    from .config import settings_for_paths
    from .runner import Mode, run

    if settings is None:
        settings = settings_for_paths(paths, config=config, isolated=isolated)
    chosen = _settings(settings, select, ignore, unsafe_fixes)
    if write is None:
        mode = Mode.FIX if chosen.fix else Mode.CHECK
    else:
        mode = Mode.FIX if write else Mode.DIFF
    return run(list(paths), chosen, mode, jobs=jobs, with_edits=False)
