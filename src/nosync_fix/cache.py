"""The content-hash cache: an unchanged file is not analysed twice.

An entry is keyed by a hash of everything the result depends on: the file's
bytes and name, the mode (check or fix, with or without edits), the rules that
apply to the file, every setting that changes what they report or how they fix,
and a fingerprint of the tool itself (the source of the ``nosync_fix`` package
and the LibCST version), so that an entry written by another version or by a
modified checkout is never found. An entry holds what is needed to rebuild the
:class:`FixResult` without parsing: findings, applied fixes, the fixed text when
it differs, the diff and any error.

Entries are JSON files under ``.nosync_cache/`` written atomically (a temporary
file renamed into place), so concurrent runs never see half an entry; an entry
that cannot be read or does not carry its own key is ignored. Nothing the cache
fails to do is an error: the file is then analysed as if there were no cache.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .config import Settings
from .engine import unified_diff
from .findings import Applicability, Edit, FileError, Finding, Fix, FixResult

CACHE_DIR_NAME = ".nosync_cache"
#: Bumped when the layout of an entry changes.
_FORMAT = 1


@dataclass(frozen=True)
class Cache:
    """A cache folder and the fingerprint of the settings its keys include."""

    folder: Path
    settings_key: str

    @classmethod
    def for_settings(cls, folder: str | os.PathLike[str], settings: Settings) -> Cache:
        return cls(Path(folder), settings_fingerprint(settings))

    def key(self, filename: str, source: bytes, rule_codes: tuple[str, ...], fix: bool,
            with_edits: bool) -> str:
        digest = hashlib.sha256()
        for part in (tool_fingerprint(), self.settings_key, filename, ",".join(rule_codes),
                     f"fix={fix},edits={with_edits}"):
            digest.update(part.encode("utf-8", "surrogateescape"))
            digest.update(b"\0")
        digest.update(source)
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, filename: str, source: bytes) -> FixResult | None:
        """The cached result for ``key``, or None (missing, unreadable or not this key)."""
        try:
            with open(self._path(key), encoding="utf-8") as handle:
                entry = json.load(handle)
            if entry.get("key") != key or entry.get("format") != _FORMAT:
                return None
            return _result(entry, filename, source)
        except (OSError, ValueError, KeyError, TypeError, LookupError):
            return None

    def put(self, key: str, result: FixResult) -> None:
        """Store ``result`` under ``key``; failing to write is not an error."""
        entry = _entry(key, result)
        path = self._path(key)
        try:
            self._prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(entry, handle, ensure_ascii=True, separators=(",", ":"))
            os.replace(temporary, path)
        except (OSError, ValueError):
            try:
                os.unlink(temporary)
            except OSError:
                pass

    def _prepare(self) -> None:
        """Create the folder with a .gitignore and a CACHEDIR.TAG, as ruff does."""
        if (self.folder / ".gitignore").exists():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", "# Created by nosync-fix.\n*\n"),
                           ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"
                            "# This file is a cache directory tag created by nosync-fix.\n")):
            try:
                with open(self.folder / name, "x", encoding="utf-8") as handle:
                    handle.write(text)
            except FileExistsError:
                pass


def default_folder(settings: Settings) -> Path:
    """``.nosync_cache`` next to the configuration, or in the working folder."""
    base = settings.root if settings.root is not None else Path.cwd()
    return base / CACHE_DIR_NAME


def settings_fingerprint(settings: Settings) -> str:
    """Every setting that changes what the rules report or how they fix, as a string.

    Paths, excludes and per-file ignores are not in it: the file name and the
    rules applied to the file are part of each key instead.
    """
    return json.dumps({
        "unsafe_fixes": settings.unsafe_fixes,
        "all_paths": settings.all_paths,
        "hot_functions": sorted(settings.hot_functions),
        "accumulate_dtype": settings.accumulate_dtype,
        "prefilter": settings.prefilter,
    }, sort_keys=True)


@cache
def tool_fingerprint() -> str:
    """A hash of this package's source and of the LibCST version."""
    try:
        libcst_version = importlib.metadata.version("libcst")
    except importlib.metadata.PackageNotFoundError:
        libcst_version = "unknown"
    digest = hashlib.sha256(f"format {_FORMAT} libcst {libcst_version}".encode())
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


# -- (de)serialising results ---------------------------------------------------------------


def _finding_to_json(finding: Finding) -> dict[str, Any]:
    data: dict[str, Any] = {
        "code": finding.code, "message": finding.message, "line": finding.line,
        "column": finding.column, "end_line": finding.end_line,
        "end_column": finding.end_column, "noqa_line": finding.noqa_line, "fix": None,
    }
    if finding.fix is not None:
        data["fix"] = {
            "applicability": finding.fix.applicability.value,
            "message": finding.fix.message,
            "edits": [[e.content, e.line, e.column, e.end_line, e.end_column]
                      for e in finding.fix.edits],
        }
    return data


def _finding_from_json(data: dict[str, Any], filename: str) -> Finding:
    fix = data["fix"]
    return Finding(
        code=data["code"], message=data["message"], filename=filename, line=data["line"],
        column=data["column"], end_line=data["end_line"], end_column=data["end_column"],
        noqa_line=data["noqa_line"],
        fix=None if fix is None else Fix(
            Applicability(fix["applicability"]), fix["message"],
            tuple(Edit(*edit) for edit in fix["edits"])),
    )


def _entry(key: str, result: FixResult) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "format": _FORMAT, "key": key, "encoding": result.encoding,
        "findings": [_finding_to_json(f) for f in result.findings],
        "applied": [_finding_to_json(f) for f in result.applied],
        "fixed": result.fixed if result.changed else None,
        "error": None,
    }
    if result.error is not None:
        # The text of a file that failed may not be its bytes decoded: keep it.
        entry["error"] = {"message": result.error.message, "kind": result.error.kind}
        entry["original"] = result.original
    return entry


def _result(entry: dict[str, Any], filename: str, source: bytes) -> FixResult:
    encoding = entry["encoding"]
    error = entry["error"]
    if error is not None:
        original = entry["original"]
        return FixResult(filename=filename, original=original, fixed=original,
                         error=FileError(filename, error["message"], error["kind"]),
                         encoding=encoding, fixed_bytes=source)
    original = source.decode(encoding)
    fixed = entry["fixed"] if entry["fixed"] is not None else original
    return FixResult(
        filename=filename, original=original, fixed=fixed,
        findings=tuple(_finding_from_json(f, filename) for f in entry["findings"]),
        applied=tuple(_finding_from_json(f, filename) for f in entry["applied"]),
        diff=unified_diff(original, fixed, filename) if fixed != original else "",
        encoding=encoding,
        fixed_bytes=source if fixed == original else fixed.encode(encoding),
    )
