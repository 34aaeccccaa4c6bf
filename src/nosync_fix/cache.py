"""The content-hash cache: an unchanged file is not analysed twice.

An entry is keyed by a hash of everything the result depends on: the file's
bytes and name, the mode (check or fix, with or without edits), the rules that
apply to the file, every setting that changes what they report or how they fix,
the Python version (what parses depends on it), and a fingerprint of the tool
itself (the source of the ``nosync_fix`` package and the LibCST version), so that
an entry written by another version or by a modified checkout is never found. An
entry holds what is needed to rebuild the :class:`FixResult` without parsing:
findings, applied fixes, the fixed text when it differs, and any error.

An entry carries fixed text that is written into the user's files, so the cache
must never supply anything this user's own runs did not compute:

- it lives outside the checked tree, in the per-user cache folder
  (``$XDG_CACHE_HOME/nosync-fix`` or the platform's equivalent), one folder per
  project named by a hash of the project's path: a cache folder that arrived
  with the sources is never read unless ``--cache-dir`` names it;
- every entry is authenticated with an HMAC keyed by a per-user secret
  (``secret.key`` in the per-user folder, created once, readable by its owner
  only), so a planted or copied database, even one named with ``--cache-dir``,
  yields nothing: its entries fail the check and are analysed afresh;
- the database is marked as ours (SQLite's ``application_id``); a file that is
  not ours (another program's database, a symbolic link, a folder that is a
  symbolic link) is left untouched with a one-line warning, and the run goes on
  without a cache. A database of ours that is corrupted is recreated.

Entries live in one SQLite database, ``cache.sqlite``: one small file per entry
cost a millisecond of file-system time each, a sixth of a whole first run. Only
the main process reads and writes it; SQLite's locking keeps concurrent runs
apart, and a transaction is all or nothing. An entry that cannot be read, does
not carry its own key or fails its HMAC is ignored, and nothing the cache fails
to do is an error: the file is then analysed as if there were no cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import importlib.metadata
import json
import os
import secrets
import sqlite3
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .config import Settings
from .findings import Applicability, Edit, FileError, Finding, Fix, FixResult, LoopSummary
from .notebook import is_notebook

APP_NAME = "nosync-fix"
DATABASE_NAME = "cache.sqlite"
SECRET_NAME = "secret.key"
#: Bumped when the layout of an entry changes.
_FORMAT = 3
#: Entries written between two commits (a run stopped half-way keeps what it did).
_BATCH = 200
#: Marks a database as ours ("NSYF"): one without it is never touched.
_APPLICATION_ID = 0x4E535946
_SQLITE_MAGIC = b"SQLite format 3\x00"
_SECRET_BYTES = 32
_TAG_TEXT = ("Signature: 8a477f597d28d172789f06886806bc55\n"
             "# This file is a cache directory tag created by nosync-fix.\n")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class CacheUnavailable(Exception):
    """The cache cannot be used safely this run; the message is one line for the user."""


def _warn(message: str) -> None:
    sys.stderr.write(f"nosync-fix: warning: {message}; running without the cache\n")
    sys.stderr.flush()


@dataclass(frozen=True)
class Cache:
    """A cache folder and the fingerprint of the settings its keys include.

    Picklable: worker processes use it to compute keys; only the main process
    opens the database (:meth:`open`) and knows the secret.
    """

    folder: Path
    settings_key: str

    @classmethod
    def for_settings(cls, folder: str | os.PathLike[str], settings: Settings) -> Cache:
        return cls(Path(folder), settings_fingerprint(settings))

    def key(self, filename: str, source: bytes, rule_codes: tuple[str, ...], fix: bool,
            with_edits: bool) -> str:
        digest = hashlib.sha256()
        for part in (tool_fingerprint(), python_tag(), self.settings_key, filename,
                     ",".join(rule_codes), f"fix={fix},edits={with_edits}"):
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

    def __init__(self, folder: Path, secret: bytes | None = None) -> None:
        self._db: sqlite3.Connection | None = None
        self._pending: list[tuple[str, str, str, str]] = []
        self._folder = folder
        self._path = folder / DATABASE_NAME
        self._repaired = False
        try:
            self._secret = secret if secret is not None else user_secret()
            _prepare(folder)
            self._db = self._connect()
        except CacheUnavailable as problem:
            _warn(str(problem))
        except (OSError, sqlite3.Error):
            pass  # locked, unwritable, gone: no cache this time

    def _connect(self) -> sqlite3.Connection | None:
        """Open our database, creating it (or recreating a corrupted one) as needed."""
        state = _database_state(self._path)
        if state == "missing":
            _create_database(self._path, replace=False)
        elif state == "broken":
            self._recreate()
        try:
            return _connect(self._path)
        except sqlite3.OperationalError:
            return None  # locked for too long: no cache this run
        except sqlite3.DatabaseError:  # ours by its header, but damaged further in
            self._recreate()
            return _connect(self._path)

    def _recreate(self) -> None:
        if self._repaired:
            raise CacheUnavailable(f"cannot repair the damaged cache database {self._path}")
        self._repaired = True
        for suffix in ("-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self._path}{suffix}")
        _create_database(self._path, replace=True)

    def _damaged(self) -> None:
        """A query failed on a damaged database of ours: start it again (once per run)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None
        self._pending.clear()
        try:
            if _database_state(self._path) in ("ours", "broken"):
                self._recreate()
                self._db = _connect(self._path)
        except CacheUnavailable as problem:
            _warn(str(problem))
        except (OSError, sqlite3.Error):
            self._db = None

    def _mac(self, key: str, value: str) -> str:
        return hmac.new(self._secret, f"{key}\0{value}".encode(), hashlib.sha256).hexdigest()

    def get(self, key: str, filename: str, source: bytes) -> FixResult | None:
        """The cached result for ``key``, or None (missing, unreadable, forged or not this key)."""
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT value, mac FROM entries WHERE key = ?",
                                   (key,)).fetchone()
        except sqlite3.OperationalError:
            return None
        except sqlite3.DatabaseError:
            self._damaged()
            return None
        if row is None:
            return None
        try:
            value, mac = row
            if not hmac.compare_digest(str(mac), self._mac(key, str(value))):
                return None  # not written by this user's nosync-fix: never trusted
            entry = json.loads(value)
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
        self._pending.append((key, tool_fingerprint(), value, self._mac(key, value)))
        if len(self._pending) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        if self._db is None or not self._pending:
            return
        try:
            with self._db:  # one transaction
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?)",
                                     self._pending)
        except sqlite3.OperationalError:
            self._db = None  # locked by another run for too long: stop caching
        except sqlite3.DatabaseError:
            self._damaged()
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


_SCHEMA = ("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, tool TEXT NOT NULL, "
           "value TEXT NOT NULL, mac TEXT NOT NULL)")


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=10.0, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA busy_timeout = 10000")
        if db.execute("PRAGMA user_version").fetchone()[0] != _FORMAT:
            raise sqlite3.DatabaseError("an older layout")  # ours: recreated by the caller
        db.execute(_SCHEMA)
    except BaseException:
        db.close()
        raise
    return db


def _database_state(path: Path) -> str:
    """``missing``, ``ours``, or ``broken`` (ours to recreate); raises when not ours.

    Ours means a regular file (not a link) whose SQLite header carries our
    application id. A file that is not a database at all in a folder we made is
    a damaged cache of ours; anything else belongs to someone else.
    """
    for suffix in ("", "-wal", "-shm", "-journal"):
        name = f"{path}{suffix}"
        try:
            info = os.lstat(name)
        except FileNotFoundError:
            if not suffix:
                return "missing"
            continue
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
            raise CacheUnavailable(f"{name} is not a regular file; not touched")
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW)
    with os.fdopen(descriptor, "rb") as handle:
        header = handle.read(100)
    if len(header) == 100 and header.startswith(_SQLITE_MAGIC):
        if int.from_bytes(header[68:72], "big") == _APPLICATION_ID:
            return "ours"
        raise CacheUnavailable(f"{path} is not a nosync-fix cache database; not touched")
    if _is_our_folder(path.parent):
        return "broken"
    raise CacheUnavailable(f"{path} is not a nosync-fix cache database; not touched")


def _is_our_folder(folder: Path) -> bool:
    try:
        return (folder / "CACHEDIR.TAG").read_text(encoding="utf-8") == _TAG_TEXT
    except (OSError, ValueError):
        return False


def _create_database(path: Path, *, replace: bool) -> None:
    """Build a marked, empty database beside ``path``, then move it into place at once:
    nobody ever sees one half made (nor one without our mark)."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                             suffix=".tmp")
    os.close(descriptor)
    try:
        db = sqlite3.connect(temporary, isolation_level=None)
        try:
            db.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {_FORMAT}")
            db.execute(_SCHEMA)
            with contextlib.suppress(sqlite3.OperationalError):
                db.execute("PRAGMA journal_mode = WAL")  # readers never wait for the writer
        finally:
            db.close()
        if replace:
            os.replace(temporary, path)
        else:
            try:
                os.link(temporary, path)  # fails if another run made it first: keep theirs
            except FileExistsError:
                pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _prepare(folder: Path) -> None:
    """Create the folder with a .gitignore and a CACHEDIR.TAG, as ruff does.

    A folder that is a symbolic link is refused: it may lead anywhere.
    """
    if folder.is_symlink():
        raise CacheUnavailable(f"the cache folder {folder} is a symbolic link; not used")
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    for name, text in ((".gitignore", "# Created by nosync-fix.\n*\n"),
                       ("CACHEDIR.TAG", _TAG_TEXT)):
        try:
            with open(folder / name, "x", encoding="utf-8") as handle:
                handle.write(text)
        except FileExistsError:
            pass


def user_cache_root() -> Path:
    """The per-user cache folder of nosync-fix: ``$XDG_CACHE_HOME/nosync-fix`` when set,
    else ``~/.cache/nosync-fix`` (``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on
    Windows)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        base = Path(xdg)
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path.home() / ".cache"
    return base / APP_NAME


def default_folder(settings: Settings) -> Path:
    """The project's folder in the per-user cache, named by a hash of the project's path
    (the folder of the configuration, or the working folder)."""
    base = settings.root if settings.root is not None else Path.cwd()
    name = hashlib.sha256(os.fsencode(base.resolve())).hexdigest()[:32]
    return user_cache_root() / name


def user_secret() -> bytes:
    """The per-user HMAC key, created on first use (0600, atomically)."""
    root = user_cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise CacheUnavailable(f"cannot create {root}: {error.strerror or error}") from None
    path = root / SECRET_NAME
    for _ in range(2):
        try:
            return _read_secret(path)
        except FileNotFoundError:
            _create_secret(path)
    return _read_secret(path)


def _read_secret(path: Path) -> bytes:
    try:
        descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise CacheUnavailable(f"cannot read {path}: {error.strerror or error}") from None
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        secret = handle.read(_SECRET_BYTES + 1)
    if not stat.S_ISREG(info.st_mode):
        raise CacheUnavailable(f"{path} is not a regular file")
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o077):
        raise CacheUnavailable(f"{path} is not private to this user (owner only, mode 0600)")
    if len(secret) != _SECRET_BYTES:
        raise CacheUnavailable(f"{path} is damaged (delete it to start a new cache)")
    return secret


def _create_secret(path: Path) -> None:
    """Write a new secret to a private temporary file, then link it into place: a second
    run creating one at the same moment keeps the first, and no one reads half of it."""
    try:
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".secret.")
    except OSError as error:
        raise CacheUnavailable(f"cannot create {path}: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:  # mkstemp makes it 0600
            handle.write(secrets.token_bytes(_SECRET_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        except OSError as error:
            raise CacheUnavailable(f"cannot create {path}: {error.strerror or error}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


@cache
def python_tag() -> str:
    """The interpreter, as far as it changes results: what parses depends on it."""
    return f"{sys.implementation.name} {sys.version_info.major}.{sys.version_info.minor}"


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
        "line_length": settings.line_length,
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
    if finding.cell is not None:
        data["cell"] = finding.cell
    if finding.fix is not None:
        data["fix"] = {
            "applicability": finding.fix.applicability.value,
            "message": finding.fix.message,
            "edits": [[e.content, e.line, e.column, e.end_line, e.end_column]
                      + ([e.cell] if e.cell is not None else [])
                      for e in finding.fix.edits],
        }
    return data


def _finding_from_json(data: dict[str, Any], filename: str) -> Finding:
    fix = data["fix"]
    return Finding(
        code=data["code"], message=data["message"], filename=filename, line=data["line"],
        column=data["column"], end_line=data["end_line"], end_column=data["end_column"],
        noqa_line=data["noqa_line"], cell=data.get("cell"),
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
        "loops": [[loop.line, loop.reads, [list(r) for r in loop.remaining]]
                  + ([loop.cell] if loop.cell is not None else []) for loop in result.loops],
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
    if fixed != original and is_notebook(filename):
        from .notebook import Notebook

        diff = Notebook(original).cell_diff(Notebook(fixed), filename)
    elif fixed != original:
        from .engine import unified_diff  # LibCST comes with the engine: only when needed

        diff = unified_diff(original, fixed, filename)
    return FixResult(
        filename=filename, original=original, fixed=fixed,
        findings=tuple(_finding_from_json(f, filename) for f in entry["findings"]),
        applied=tuple(_finding_from_json(f, filename) for f in entry["applied"]),
        diff=diff,
        encoding=encoding,
        fixed_bytes=source if fixed == original else fixed.encode(encoding),
        loops=tuple(LoopSummary(loop[0], loop[1], tuple((r[0], r[1]) for r in loop[2]),
                                *loop[3:]) for loop in entry.get("loops", ())),
    )
