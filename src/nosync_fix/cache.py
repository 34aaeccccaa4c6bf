"""The content-hash cache: an unchanged file is not analysed twice.

An entry is keyed by a hash of everything the result depends on: the file's
bytes and name, the mode (check or fix, with or without edits), the rules that
apply to the file, every setting that changes what they report or how they fix,
and a fingerprint of the tool itself (the source of the ``nosync_fix`` package
and the LibCST version), so that an entry written by another version or by a
modified checkout is never found. An entry holds what is needed to rebuild the
:class:`FixResult` without parsing: findings, applied fixes, the fixed text when
it differs, and any error.

Entries live in one SQLite database, ``.nosync_cache/cache.sqlite``: one small
file per entry cost a millisecond of file-system time each, a sixth of a whole
first run. Only the main process reads and writes it; SQLite's locking keeps
concurrent runs apart, and a transaction is all or nothing. An entry that cannot
be read or does not carry its own key is ignored, and nothing the cache fails to
do is an error: the file is then analysed as if there were no cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .config import Settings
from .findings import Applicability, Edit, FileError, Finding, Fix, FixResult

CACHE_DIR_NAME = ".nosync_cache"
DATABASE_NAME = "cache.sqlite"
#: Bumped when the layout of an entry changes.
_FORMAT = 2
#: Entries written between two commits (a run stopped half-way keeps what it did).
_BATCH = 200


@dataclass(frozen=True)
class Cache:
    """A cache folder and the fingerprint of the settings its keys include.

    Picklable: worker processes use it to compute keys; only the main process
    opens the database (:meth:`open`).
    """

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

    @contextlib.contextmanager
    def open(self) -> Iterator[CacheStore]:
        store = CacheStore(self.folder)
        try:
            yield store
        finally:
            store.close()


class CacheStore:
    """The open database; every method swallows the cache's own failures."""

    def __init__(self, folder: Path) -> None:
        self._db: sqlite3.Connection | None = None
        self._pending: list[tuple[str, str, str]] = []
        path = folder / DATABASE_NAME
        for attempt in range(2):
            try:
                _prepare(folder)
                self._db = _connect(path)
                return
            except sqlite3.OperationalError:
                return  # locked or unwritable: no cache this time
            except sqlite3.DatabaseError:  # not a database (any more): start a new one
                if attempt == 0:
                    for leftover in (path, path.with_name(path.name + "-wal"),
                                     path.with_name(path.name + "-shm")):
                        with contextlib.suppress(OSError):
                            leftover.unlink()
            except OSError:
                return

    def get(self, key: str, filename: str, source: bytes) -> FixResult | None:
        """The cached result for ``key``, or None (missing, unreadable or not this key)."""
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT value FROM entries WHERE key = ?",
                                   (key,)).fetchone()
        except sqlite3.Error:
            return None
        if row is None:
            return None
        try:
            entry = json.loads(row[0])
            if entry.get("key") != key or entry.get("format") != _FORMAT:
                return None
            return _result(entry, filename, source)
        except (ValueError, KeyError, TypeError, LookupError, AttributeError):
            return None

    def put(self, key: str, result: FixResult) -> None:
        """Remember ``result`` under ``key`` (written in batches)."""
        if self._db is None:
            return
        value = json.dumps(_entry(key, result), ensure_ascii=True, separators=(",", ":"))
        self._pending.append((key, tool_fingerprint(), value))
        if len(self._pending) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        if self._db is None or not self._pending:
            return
        try:
            with self._db:  # one transaction
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?)",
                                     self._pending)
        except sqlite3.Error:
            self._db = None  # locked by another run for too long, or broken: stop caching
        self._pending.clear()

    def close(self) -> None:
        self.flush()
        if self._db is not None:
            try:
                # Entries of other versions of the tool can never be found again.
                with self._db:
                    self._db.execute("BEGIN")
                    self._db.execute("DELETE FROM entries WHERE tool != ?",
                                     (tool_fingerprint(),))
            except sqlite3.Error:
                pass
            self._db.close()
            self._db = None


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=10.0, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA busy_timeout = 10000")
        with contextlib.suppress(sqlite3.OperationalError):
            db.execute("PRAGMA journal_mode = WAL")  # readers never wait for the writer
            db.execute("PRAGMA synchronous = NORMAL")
        db.execute("CREATE TABLE IF NOT EXISTS entries "
                   "(key TEXT PRIMARY KEY, tool TEXT NOT NULL, value TEXT NOT NULL)")
    except BaseException:
        db.close()
        raise
    return db


def _prepare(folder: Path) -> None:
    """Create the folder with a .gitignore and a CACHEDIR.TAG, as ruff does."""
    if (folder / ".gitignore").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in ((".gitignore", "# Created by nosync-fix.\n*\n"),
                       ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"
                        "# This file is a cache directory tag created by nosync-fix.\n")):
        try:
            with open(folder / name, "x", encoding="utf-8") as handle:
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
    diff = ""
    if fixed != original:
        from .engine import unified_diff  # LibCST comes with the engine: only when needed

        diff = unified_diff(original, fixed, filename)
    return FixResult(
        filename=filename, original=original, fixed=fixed,
        findings=tuple(_finding_from_json(f, filename) for f in entry["findings"]),
        applied=tuple(_finding_from_json(f, filename) for f in entry["applied"]),
        diff=diff,
        encoding=encoding,
        fixed_bytes=source if fixed == original else fixed.encode(encoding),
    )
