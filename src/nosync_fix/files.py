"""Files: finding the sources to check, reading them safely, writing them atomically.

Directories are walked for ``*.py``, ``*.pyi`` and ``*.ipynb`` files (Jupyter notebooks,
as ruff checks them), skipping the excluded
folders and, inside a git work tree, whatever git ignores. The ignore files are
read with ``pathspec``, following git's rules (:class:`GitIgnore`); git itself is
never run: the checked tree may carry its own ``.git/config``, and git runs the
commands such a file names (``core.fsmonitor``). Symbolic links to folders are
not followed, so link loops do no harm. A file named on the command line is
always processed, unless ``force-exclude`` is set and an exclude pattern matches it
or a folder above it inside the project (:meth:`Settings.is_force_excluded`).

Writes go to a temporary file in the same folder, which then replaces the
original (``os.replace``), keeping its permission bits, owner and group. On Linux
that file has no name until its bytes are on disk, so a run killed mid-write leaves
no temporary file behind. A file
with several hard links, or whose owner or group the new file cannot be given
(not running as root), is instead rewritten in place, as black and ruff always
do: its links, owner and group stay, at the cost of atomicity (on a failed write
the original bytes are put back). A file that changed on disk since it was read,
or that is read-only, is left alone with an error; so is a file reached through
a symbolic link that leads outside the checked paths (:func:`outside_roots`).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from pathspec import GitIgnoreSpec

from .config import Settings
from .findings import FileError

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")
#: The suffix of the temporary file a write goes through before it replaces the original.
TEMPORARY_SUFFIX = ".nosync-tmp"


class FileProblem(Exception):
    """Reading or writing a file failed; the message is one line for the user."""


def discover(paths: Sequence[str], settings: Settings) -> tuple[list[str], list[FileError]]:
    """The files to process under ``paths``, in a stable order, and the paths that failed."""
    files: list[str] = []
    errors: list[FileError] = []
    seen: set[object] = set()

    def add(path: str) -> None:
        try:  # the same file reached twice (a link to it, two overlapping paths) counts once
            info = os.stat(path)
            key: object = (info.st_dev, info.st_ino)
        except OSError:
            key = os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            files.append(path)

    for raw in paths:
        path = Path(raw)
        if settings.force_exclude and settings.is_force_excluded(raw):
            continue  # named, but excluded: what pre-commit asks of a file it names
        try:
            if path.is_symlink() and not path.exists():
                errors.append(FileError(raw, "broken or looping symbolic link", "io"))
            elif path.is_dir():
                for found in walk(path, settings):
                    add(found)
            elif path.is_file():
                if path.suffix in PYTHON_SUFFIXES or _has_python_shebang(path):
                    add(raw)
                else:
                    errors.append(FileError(
                        raw, "not a Python source file (expected .py, .pyi or .ipynb)", "io"))
            elif path.exists():
                errors.append(FileError(raw, "not a regular file or folder", "io"))
            else:
                errors.append(FileError(raw, "no such file or folder", "io"))
        except OSError as error:
            errors.append(FileError(raw, _reason(error), "io"))
    return files, errors


def walk(root: Path, settings: Settings) -> list[str]:
    """Python files below ``root`` that are neither excluded nor ignored by git.

    ``root`` itself is not tested against the ignore files (it was named), but
    the ignore files of its parent folders up to the work tree's top apply below it.
    """
    ignore = GitIgnore.for_path(root)
    # The walked folder's path below the work tree's top, to which names are appended.
    prefix = ignore.relative(root) if ignore is not None else None
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        below = None
        if prefix is not None:
            inner = os.path.relpath(dirpath, root).replace(os.sep, "/")
            below = prefix if inner == "." else f"{prefix}/{inner}" if prefix else inner
        kept = []
        for d in sorted(dirnames):
            path = os.path.join(dirpath, d)
            if settings.is_excluded(path, root) or os.path.islink(path):
                continue
            if below is not None and ignore.ignored_relative(_join(below, d), is_dir=True):
                continue  # an ignored folder is not entered: nothing in it can be re-included
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            if not name.endswith(PYTHON_SUFFIXES):
                continue
            path = os.path.normpath(os.path.join(dirpath, name))
            if settings.is_excluded(path, root):
                continue
            if os.path.islink(path) and not os.path.isfile(path):
                continue  # broken or looping link met while walking: nothing to check
            if below is not None and ignore.ignored_relative(_join(below, name), is_dir=False):
                continue
            found.append(path)
    return found


class GitIgnore:
    """git's ignore rules for one work tree, read from its files without running git.

    As git does: each ``.gitignore`` applies to the paths below its own folder,
    and a deeper one takes precedence over those above it; within a file the last
    matching pattern wins, so ``!pattern`` re-includes; then ``$GIT_DIR/info/exclude``;
    then the user's default global excludes file (``$XDG_CONFIG_HOME/git/ignore`` or
    ``~/.config/git/ignore``; a ``core.excludesFile`` set in git's configuration is
    not read, since that would mean reading configuration that may come with the
    tree). An ignored folder is pruned by the caller. A ``.gitignore`` that is a
    symbolic link or not a regular file is not read (git does not follow such
    links either), and invalid patterns are skipped, as git skips them.
    """

    def __init__(self, top: Path, git_dir: Path | None) -> None:
        self.top = top
        self._per_folder: dict[str, _Patterns | None] = {}
        self._general: list[_Patterns] = []
        sources = []
        if git_dir is not None:
            sources.append(git_dir / "info" / "exclude")
        sources.append(_global_excludes_file())
        for source in sources:
            spec = _read_spec(source)
            if spec is not None:
                self._general.append(spec)

    @classmethod
    def for_path(cls, path: Path) -> GitIgnore | None:
        """The rules of the work tree holding ``path``, or None outside any work tree."""
        try:
            start = path.resolve()
        except OSError:
            return None
        for folder in (start, *start.parents):
            dot_git = folder / ".git"
            try:
                info = os.lstat(dot_git)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                return cls(folder, dot_git)
            if stat.S_ISREG(info.st_mode):
                return cls(folder, _linked_git_dir(folder, dot_git))
            return cls(folder, None)
        return None

    def relative(self, path: str | os.PathLike[str]) -> str | None:
        """``path`` relative to the top, with ``/`` ("" for the top), or None if outside."""
        try:
            relative = Path(os.path.abspath(path)).resolve().relative_to(self.top).as_posix()
        except (ValueError, OSError):
            return None
        return "" if relative == "." else relative

    def ignored(self, path: str | os.PathLike[str], is_dir: bool) -> bool:
        """Whether git ignores ``path``, a folder when ``is_dir``."""
        relative = self.relative(path)
        return bool(relative) and self.ignored_relative(relative, is_dir)  # type: ignore[arg-type]

    def ignored_relative(self, relative: str, is_dir: bool) -> bool:
        """:meth:`ignored` for a path already relative to the top (``a/b.py``)."""
        parts = relative.split("/")
        suffix = "/" if is_dir else ""
        for depth in range(len(parts) - 1, -1, -1):  # the deepest .gitignore first
            spec = self._spec_of("/".join(parts[:depth]))
            if spec is not None:
                verdict = spec.verdict("/".join(parts[depth:]) + suffix)
                if verdict is not None:
                    return verdict
        for spec in self._general:
            verdict = spec.verdict(relative + suffix)
            if verdict is not None:
                return verdict
        return False

    def _spec_of(self, folder: str) -> _Patterns | None:
        if folder not in self._per_folder:
            self._per_folder[folder] = _read_spec(self.top / folder / ".gitignore")
        return self._per_folder[folder]


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _linked_git_dir(top: Path, dot_git: Path) -> Path | None:
    """The common git folder of a linked work tree or submodule (``.git`` is a file)."""
    try:
        text = _read_small(dot_git)
    except OSError:
        return None
    if text is None or not text.startswith("gitdir:"):
        return None
    git_dir = (top / text[len("gitdir:"):].strip()).resolve()
    try:
        common = _read_small(git_dir / "commondir")
    except OSError:
        return git_dir
    return (git_dir / common.strip()).resolve() if common else git_dir


def _global_excludes_file() -> Path:
    config_home = os.environ.get("XDG_CONFIG_HOME") or ""
    base = Path(config_home) if config_home else Path.home() / ".config"
    return base / "git" / "ignore"


#: Ignore files larger than this are not read (git's own limit is 100 MB).
_MAX_IGNORE_FILE = 1 << 24


def _read_small(path: Path) -> str | None:
    """The text of a regular file that is not a link, or None; OSError when unreadable."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_IGNORE_FILE:
        return None
    with open(path, "rb") as handle:
        return handle.read(_MAX_IGNORE_FILE).decode("utf-8", "surrogateescape")


class _Patterns:
    """The patterns of one ignore file, parsed by pathspec, asked about one path at a time.

    pathspec's own matching answers for a whole path including its parent folders,
    giving a folder's match lower priority; here folders are asked first and pruned
    when ignored, so a path only needs the last pattern that matches the path
    itself (git's rule within one file). A match of a pattern through one of the
    path's parents (pathspec marks the folder's slash) does not count.
    """

    def __init__(self, lines: list[str]) -> None:
        try:
            parsed = GitIgnoreSpec.from_lines(lines).patterns
        except (ValueError, TypeError):  # an invalid pattern: git skips that line alone
            parsed = [p for line in lines for p in _parse_one(line)]
        # Last first: the last pattern that matches decides.
        self._patterns = [(p.regex, bool(p.include), str(p.pattern).rstrip().endswith("/**"))
                          for p in reversed(parsed)
                          if p.include is not None and p.regex is not None]

    def verdict(self, path: str) -> bool | None:
        """True (ignored), False (re-included by ``!``) or None (no pattern matches).
        ``path`` is relative to the ignore file's folder, a folder's ending in ``/``."""
        for regex, include, inside_only in self._patterns:
            for match in regex.finditer(path):
                if _matches_itself(match, path, inside_only):
                    return include
        return None


def _matches_itself(match: re.Match[str], path: str, inside_only: bool) -> bool:
    if match.re.groupindex.get("ps_d") is not None and match.group("ps_d") is not None:
        return match.end("ps_d") == len(path)  # the slash of the path's own folder mark
    if inside_only and match.end() == len(path):
        return False  # "dir/**" matches what is inside dir, not dir itself
    return True


def _parse_one(line: str) -> list:  # type: ignore[type-arg]
    try:
        return list(GitIgnoreSpec.from_lines([line]).patterns)
    except (ValueError, TypeError):
        return []


def _read_spec(path: Path) -> _Patterns | None:
    try:
        text = _read_small(path)
    except (OSError, ValueError):
        return None
    if not text:
        return None
    patterns = _Patterns(text.splitlines())
    return patterns if patterns._patterns else None


def _has_python_shebang(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            first = handle.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def read_source(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise FileProblem(_reason(error)) from None


def checked_roots(paths: Sequence[str]) -> tuple[str, ...]:
    """The real folders a run may write in: each folder named, and the folder of each
    file named (so a named link into another folder is not followed for writing)."""
    roots = []
    for raw in paths:
        if raw == "-":
            continue
        path = os.path.abspath(raw)
        roots.append(os.path.realpath(path if os.path.isdir(path) else os.path.dirname(path)))
    return tuple(roots)


def outside_roots(path: str, roots: Sequence[str]) -> bool:
    """Whether ``path``, links resolved, lies outside every one of ``roots``."""
    target = os.path.realpath(path)
    return not any(target == root or target.startswith(root.rstrip(os.sep) + os.sep)
                   for root in roots)


def source_digest(data: bytes) -> bytes:
    """What :func:`write_atomic` compares the file on disk with: a hash of the bytes read."""
    return hashlib.sha256(data).digest()


def write_atomic(path: str, data: bytes, expected: bytes) -> None:
    """Replace the file at ``path`` by ``data`` if it still holds the bytes whose
    :func:`source_digest` is ``expected``, keeping its mode, owner, group and hard links
    (see the module's notes)."""
    target = os.path.realpath(path)
    try:
        with open(target, "rb") as handle:
            current = handle.read()
            info = os.fstat(handle.fileno())
    except OSError as error:
        raise FileProblem(f"cannot re-read before writing: {_reason(error)}") from None
    if source_digest(current) != expected:
        raise FileProblem("changed on disk while nosync-fix was running; not written")
    expected = current
    mode = stat.S_IMODE(info.st_mode)
    # No write bit at all means read-only, even for root, who could write anyway.
    if not os.access(target, os.W_OK) or not mode & 0o222:
        raise FileProblem("file is read-only; not written")
    if info.st_nlink > 1:
        _write_in_place(target, data, expected)  # a new file would break the links
        return
    folder, name = os.path.split(target)
    folder = folder or "."
    try:
        descriptor, temporary = _new_file_beside(folder, name)
    except OSError as error:
        raise FileProblem(f"cannot write next to the file: {_reason(error)}") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            made = os.fstat(handle.fileno())
            # The unnamed file has no path yet: set it up through its descriptor.
            place = handle.fileno() if temporary is None else temporary
            in_place = False
            if (made.st_uid, made.st_gid) != (info.st_uid, info.st_gid) and hasattr(os, "chown"):
                try:
                    os.chown(place, info.st_uid, info.st_gid)  # before chmod: it clears setuid
                except PermissionError:  # only root gives files away: keep the file itself
                    in_place = True
            if not in_place:
                os.chmod(place, mode)
                if temporary is None:
                    temporary = _name_unnamed(handle.fileno(), folder, name)
        if in_place:
            if temporary is not None:
                os.unlink(temporary)
            _write_in_place(target, data, expected)
            return
        os.replace(temporary, target)
    except BaseException as error:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass
        if isinstance(error, OSError):
            raise FileProblem(f"cannot write: {_reason(error)}") from None
        raise


def _new_file_beside(folder: str, name: str) -> tuple[int, str | None]:
    """A new file in ``folder`` open for writing, and its path. On Linux the file has no
    name (``O_TMPFILE``) until :func:`_name_unnamed` gives it one, just before it
    replaces the original: a process killed while writing (SIGKILL cannot be caught)
    leaves nothing behind. Elsewhere, or where the file system cannot, a named
    temporary file."""
    unnamed = getattr(os, "O_TMPFILE", 0)
    if unnamed and os.path.isdir("/proc/self/fd"):
        try:
            return os.open(folder, unnamed | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0),
                           0o600), None
        except OSError:
            pass  # a file system without O_TMPFILE: EOPNOTSUPP, EISDIR on old kernels
    return tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=TEMPORARY_SUFFIX)


def _name_unnamed(descriptor: int, folder: str, name: str) -> str:
    """Give the unnamed file open at ``descriptor`` a fresh name in ``folder``; that
    name. The link never replaces an existing file, nor follows a link planted there."""
    # A folder descriptor makes os.link call linkat with AT_SYMLINK_FOLLOW: plain link()
    # would try to link /proc's magic link itself, across devices.
    directory = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        while True:
            temporary = f".{name}.{secrets.token_hex(4)}{TEMPORARY_SUFFIX}"
            try:
                os.link(f"/proc/self/fd/{descriptor}", temporary, dst_dir_fd=directory,
                        follow_symlinks=True)
                return os.path.join(folder, temporary)
            except FileExistsError:
                continue
    finally:
        os.close(directory)


def _write_in_place(target: str, data: bytes, expected: bytes) -> None:
    """Overwrite the file itself (its inode: links, owner and group stay); if the write
    fails half-way, put the original bytes back."""
    try:
        handle = open(target, "r+b")
    except OSError as error:
        raise FileProblem(f"cannot write: {_reason(error)}") from None
    with handle:
        try:
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
        except OSError as error:
            try:
                handle.seek(0)
                handle.write(expected)
                handle.truncate()
                handle.flush()
            except OSError:
                raise FileProblem(f"cannot write, and the file may be damaged: "
                                  f"{_reason(error)}") from None
            raise FileProblem(f"cannot write: {_reason(error)}") from None


def _reason(error: OSError) -> str:
    if isinstance(error, PermissionError):
        return "permission denied"
    if isinstance(error, IsADirectoryError):
        return "is a folder"
    if isinstance(error, FileNotFoundError):
        return "no such file or folder"
    if error.errno == 40:  # ELOOP
        return "symbolic link loop"
    return error.strerror or str(error)
