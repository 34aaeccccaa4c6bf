"""Files: finding the sources to check, reading them safely, writing them atomically.

Directories are walked for ``*.py`` and ``*.pyi`` files, skipping the excluded
folders and, inside a git work tree, whatever git ignores (asked of git itself
with ``git check-ignore``, so the rules are exactly git's). Symbolic links to
folders are not followed, so link loops do no harm. A file named on the
command line is always processed.

Writes go to a temporary file in the same folder, which then replaces the
original (``os.replace``), keeping its permission bits. A file that changed on
disk since it was read, or that is read-only, is left alone with an error.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .config import Settings
from .findings import FileError

PYTHON_SUFFIXES = (".py", ".pyi")


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
                        raw, "not a Python source file (expected .py or .pyi)", "io"))
            elif path.exists():
                errors.append(FileError(raw, "not a regular file or folder", "io"))
            else:
                errors.append(FileError(raw, "no such file or folder", "io"))
        except OSError as error:
            errors.append(FileError(raw, _reason(error), "io"))
    return files, errors


def walk(root: Path, settings: Settings) -> list[str]:
    """Python files below ``root`` that are neither excluded nor ignored by git."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(
            d for d in dirnames
            if not settings.is_excluded(os.path.join(dirpath, d), root)
            and not os.path.islink(os.path.join(dirpath, d))
        )
        for name in sorted(filenames):
            if not name.endswith(PYTHON_SUFFIXES):
                continue
            path = os.path.normpath(os.path.join(dirpath, name))
            if settings.is_excluded(path, root):
                continue
            if os.path.islink(path) and not os.path.isfile(path):
                continue  # broken or looping link met while walking: nothing to check
            found.append(path)
    return _without_git_ignored(root, found)


def _without_git_ignored(root: Path, files: list[str]) -> list[str]:
    if not files or shutil.which("git") is None:
        return files
    try:
        inside = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"],
            capture_output=True, text=True, timeout=30)
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return files
        relative = [os.path.relpath(f, root) for f in files]
        checked = subprocess.run(
            ["git", "-C", str(root), "check-ignore", "-z", "--stdin"],
            input="\0".join(relative), capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return files
    if checked.returncode not in (0, 1):
        return files  # git could not tell (a path outside the work tree): keep everything
    ignored = set(filter(None, checked.stdout.split("\0")))
    return [f for f, r in zip(files, relative, strict=True) if r not in ignored]


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


def write_atomic(path: str, data: bytes, expected: bytes) -> None:
    """Replace the file at ``path`` by ``data`` if it still holds ``expected``."""
    target = os.path.realpath(path)
    try:
        with open(target, "rb") as handle:
            current = handle.read()
    except OSError as error:
        raise FileProblem(f"cannot re-read before writing: {_reason(error)}") from None
    if current != expected:
        raise FileProblem("changed on disk while nosync-fix was running; not written")
    mode = stat.S_IMODE(os.stat(target).st_mode)
    # No write bit at all means read-only, even for root, who could write anyway.
    if not os.access(target, os.W_OK) or not mode & 0o222:
        raise FileProblem("file is read-only; not written")
    folder, name = os.path.split(target)
    try:
        descriptor, temporary = tempfile.mkstemp(dir=folder or ".", prefix=f".{name}.",
                                                 suffix=".nosync-tmp")
    except OSError as error:
        raise FileProblem(f"cannot write next to the file: {_reason(error)}") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise FileProblem(f"cannot write: {_reason(error)}") from None
        raise


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
