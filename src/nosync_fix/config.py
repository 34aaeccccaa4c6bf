"""Settings: ``[tool.nosync-fix]`` in pyproject.toml, command-line overrides, rule selection.

Selection follows ruff: ``select`` (default ``ALL``) plus ``extend-select``,
minus ``ignore``; each entry is a full code (``NSY201``), a prefix (``NSY2``)
or ``ALL``. When a selector and an ignore both match a rule, the more specific
one wins; on a tie, ignore wins.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .rules import rule_codes, rules_with_codes

if TYPE_CHECKING:
    from .rules import Rule

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", "env", ".env", "__pycache__", "build", "dist",
    "node_modules", "site-packages", ".tox", ".nox", ".eggs", "*.egg-info", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".nosync_cache", "__pypackages__", "_build", "buck-out",
)
ACCUMULATE_DTYPES = ("float64", "float32")
#: Files larger than this (bytes) are skipped, with a warning: the analysis holds a
#: file's whole syntax tree and its metadata, some 900 bytes of memory per byte of
#: source. The largest hand-written file in torch, transformers and their dependencies
#: is 1.4 MB (torch's common_methods_invocations.py).
DEFAULT_MAX_FILE_SIZE = 2_000_000
#: black's and ruff's default line length.
DEFAULT_LINE_LENGTH = 88
SECTION = "nosync-fix"


class ConfigError(Exception):
    """A configuration problem, worded as one line for the user."""


@dataclass(frozen=True)
class Settings:
    """Everything that decides what is checked and how it is fixed."""

    select: tuple[str, ...] = ("ALL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool = False
    #: Fix files in place when neither --diff nor --check is given (false: report only).
    fix: bool = True
    #: Report findings outside hot paths too.
    all_paths: bool = False
    #: Extra function names whose bodies are hot paths.
    hot_functions: frozenset[str] = frozenset()
    #: (glob, codes) pairs: codes ignored in files matching the glob; a glob that starts
    #: with ``!`` is negated: its codes are ignored in the files that do not match it.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    #: Apply the excludes to paths named on the command line too (pre-commit names files).
    force_exclude: bool = False
    #: Sum float reads on the device in float64 (exactly as Python adds floats) or in
    #: float32 (faster on some accelerators, available on Apple MPS; an unsafe fix).
    accumulate_dtype: str = "float64"
    #: Skip the rules that declare signals the pre-filter does not find (off only to
    #: check the pre-filter itself: the findings are the same either way).
    prefilter: bool = True
    #: Skip larger files (bytes), with a warning: memory grows with a file's size.
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    #: Fixed code is split to stay within this many characters (0: never split). From
    #: ``line-length`` in [tool.nosync-fix], else the project's formatter's (see
    #: :func:`formatter_line_length`), else black's and ruff's default, 88.
    line_length: int = DEFAULT_LINE_LENGTH
    #: The folder the configuration came from: globs are relative to it.
    root: Path | None = None
    #: The file the settings were read from, if any.
    source: Path | None = None

    def with_overrides(self, **changes: Any) -> Settings:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def rules(self) -> tuple[type[Rule], ...]:
        """The selected rules."""
        return rules_with_codes(self.codes())

    def rules_for(self, filename: str) -> tuple[type[Rule], ...]:
        """The selected rules minus the per-file ignores that match ``filename``."""
        return rules_with_codes(self.codes_for(filename))

    def codes(self) -> tuple[str, ...]:
        """The codes of :meth:`rules` (without importing them)."""
        return select_codes(self.select + self.extend_select, self.ignore)

    def codes_for(self, filename: str) -> tuple[str, ...]:
        """The codes of :meth:`rules_for` (without importing them)."""
        ignored: list[str] = []
        for pattern, codes in self.per_file_ignores:
            negated = pattern.startswith("!")
            if _glob_matches(pattern[1:] if negated else pattern, filename, self.root,
                             Path.cwd()) != negated:
                ignored.extend(codes)
        if not ignored:
            return self.codes()
        return select_codes(self.select + self.extend_select, self.ignore + tuple(ignored))

    def is_excluded(self, path: str | Path, walk_root: Path | None = None) -> bool:
        """Whether ``path`` (a file or folder met while walking) matches an exclude pattern.

        Patterns without a slash match the name (``build``, ``*_pb2.py``); patterns
        with one match the path relative to the project root or the walked folder.
        """
        patterns = self.exclude + self.extend_exclude
        names, paths = _split_patterns(patterns)
        if names.match(os.path.basename(path)):
            return True
        return bool(paths) and any(_glob_matches(p, path, self.root, walk_root) for p in paths)

    def is_force_excluded(self, path: str | Path) -> bool:
        """Whether a path named on the command line is excluded under ``force-exclude``
        (as ruff does): it, or a folder above it inside the project, matches an exclude
        pattern. The project's own folder (the configuration's, else the working folder)
        and the folders above it are not tested: their names are not the project's choice.
        """
        root = Path(os.path.abspath(self.root or Path.cwd()))
        current = Path(os.path.abspath(path))
        inside = root in current.parents
        while current != root:
            if self.is_excluded(current, root):
                return True
            if not inside:
                break  # outside the project: only the path itself
            current = current.parent
        return False

    def validate(self) -> Settings:
        for where, selectors in (("select", self.select), ("extend-select", self.extend_select),
                                 ("ignore", self.ignore)):
            for selector in selectors:
                check_selector(selector, where)
        for pattern, codes in self.per_file_ignores:
            if not pattern.removeprefix("!").strip():
                raise ConfigError(f"empty pattern {pattern!r} in per-file-ignores")
            for code in codes:
                check_selector(code, "per-file-ignores")
        if self.max_file_size <= 0:
            raise ConfigError(f"max-file-size must be positive, not {self.max_file_size}")
        if self.accumulate_dtype not in ACCUMULATE_DTYPES:
            raise ConfigError(
                f"accumulate-dtype must be one of {', '.join(ACCUMULATE_DTYPES)}, "
                f"not {self.accumulate_dtype!r}")
        return self


def check_selector(selector: str, where: str = "select") -> None:
    """Raise ConfigError unless ``selector`` names at least one rule."""
    if not selector.strip():  # "" is a prefix of every code: it would select or ignore all
        raise ConfigError(f"empty rule code in {where}")
    if selector.upper() == "ALL":
        return
    if not any(code.startswith(selector.upper()) for code in rule_codes()):
        raise ConfigError(f"unknown rule code or prefix {selector!r} in {where}")


def select_rules(selected: Iterable[str], ignored: Iterable[str]) -> tuple[type[Rule], ...]:
    """The rules ``selected`` picks and ``ignored`` leaves out (ruff's precedence)."""
    return rules_with_codes(select_codes(selected, ignored))


def select_codes(selected: Iterable[str], ignored: Iterable[str]) -> tuple[str, ...]:
    """The codes of :func:`select_rules`."""
    return _select_codes(tuple(s.upper() for s in selected), tuple(s.upper() for s in ignored))


@functools.cache  # asked once per file with the same few selector lists
def _select_codes(selected: tuple[str, ...], ignored: tuple[str, ...]) -> tuple[str, ...]:
    def specificity(selector: str, code: str) -> int:
        if selector == "ALL":
            return 0
        return len(selector) if code.startswith(selector) else -1

    chosen = []
    for code in rule_codes():
        best_select = max((specificity(s, code) for s in selected), default=-1)
        best_ignore = max((specificity(s, code) for s in ignored), default=-1)
        if best_select >= 0 and best_select > best_ignore:
            chosen.append(code)
    return tuple(chosen)


# -- reading configuration -----------------------------------------------------------------

_KEYS = {
    "select", "extend-select", "ignore", "unsafe-fixes", "exclude", "extend-exclude",
    "per-file-ignores", "hot-functions", "all-paths", "accumulate-dtype", "max-file-size",
    "force-exclude", "fix", "extend-per-file-ignores", "line-length",
}

_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9}


def parse_size(value: object) -> int:
    """Bytes from an integer or a string such as ``"2MB"``, ``"500 KB"`` or ``"1.5 MB"``
    (decimal units: 1 MB = 1,000,000 bytes)."""
    if isinstance(value, bool):
        raise ConfigError(f"max-file-size must be a size in bytes or a string such as '2MB', "
                          f"not {value!r}")
    if isinstance(value, int):
        return value
    match = _SIZE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(f"max-file-size must be a size in bytes or a string such as '2MB', "
                          f"not {value!r}")
    return int(float(match.group(1)) * _UNITS[(match.group(2) or "").upper()])


def too_large(size: int, limit: int) -> str:
    """The one-line reason a file of ``size`` bytes is skipped."""
    return (f"skipped: {format_size(size)} is over the limit of {format_size(limit)} per "
            "file (max-file-size, which --max-file-size or [tool.nosync-fix] can raise)")


def format_size(size: int) -> str:
    """``2 MB``, ``1.5 MB``, ``800 KB``, ``12 bytes``: for messages."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` with a [tool.nosync-fix] table."""
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = _read_toml(candidate)
            except ConfigError:
                return candidate  # report the broken file rather than skip it
            if SECTION in _tool_table(data):
                return candidate
    return None


def config_for_paths(paths: Sequence[str | os.PathLike[str]]) -> Path | None:
    """The configuration the command line reads for ``paths``: the nearest
    pyproject.toml with a [tool.nosync-fix] table at or above the folder the existing
    paths have in common (the working folder when none exists; ``-`` is stdin)."""
    return find_config(search_start(paths))


def search_start(paths: Sequence[str | os.PathLike[str]]) -> Path:
    """Where the search for configuration starts: the folder ``paths`` have in common."""
    existing = [Path(p) for p in paths if str(p) != "-" and Path(p).exists()]
    try:
        return Path(os.path.commonpath([str(p.absolute()) for p in existing])) if existing \
            else Path.cwd()
    except ValueError:  # no common folder (paths on different drives)
        return Path.cwd()


def formatter_line_length(start: Path) -> tuple[int, Path] | None:
    """The line length the project's formatter keeps to, and the file that says so.

    The nearest folder at or above ``start`` with a configuration of ruff or black
    (``.ruff.toml``, ``ruff.toml``, pyproject.toml's [tool.ruff] or [tool.black]); of its
    files, in ruff's order and then black's, the first that sets ``line-length``: a
    project that formats with black and lints with ruff often sets it for black only.
    Where none sets it, the formatters' default, 88. A file that cannot be read is passed
    over: it is not ours to judge, and a check must not fail for it.
    """
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for folder in (start, *start.parents):
        tables: list[tuple[Mapping[str, Any], Path]] = []
        for name in (".ruff.toml", "ruff.toml", "pyproject.toml"):
            candidate = folder / name
            if not candidate.is_file():
                continue
            try:
                data = _read_toml(candidate)
            except ConfigError:
                continue
            if name != "pyproject.toml":
                tables.append((data, candidate))
                continue
            tools = _tool_table(data)
            tables.extend((tools[tool], candidate) for tool in ("ruff", "black")
                          if isinstance(tools.get(tool), Mapping))
        for table, source in tables:
            for key in ("line-length", "line_length"):  # black takes both spellings
                if _whole_number(table.get(key)):
                    return table[key], source
        if tables:
            return DEFAULT_LINE_LENGTH, tables[0][1]
    return None


def _whole_number(value: object) -> bool:
    """Whether a formatter's ``line-length`` is a positive whole number."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def project_settings(found: Path | None, paths: Sequence[str | os.PathLike[str]]) -> Settings:
    """The settings of ``found`` (:func:`config_for_paths`) or, without one, the defaults
    with the line length of the project's formatter (:func:`formatter_line_length`)."""
    if found is not None:
        return load_settings(found)
    formatter = formatter_line_length(search_start(paths))
    return Settings(line_length=formatter[0]) if formatter else Settings()


def settings_for_paths(paths: Sequence[str | os.PathLike[str]], *,
                       config: str | os.PathLike[str] | None = None,
                       isolated: bool = False) -> Settings:
    """The settings the command line uses for ``paths``: ``config`` when given, else the
    project's pyproject.toml found from the paths (:func:`config_for_paths`); the
    defaults when ``isolated`` or when there is none."""
    if isolated:
        return Settings()
    if config is not None:
        if not Path(config).is_file():
            raise ConfigError(f"config file {str(config)!r} does not exist")
        found: Path | None = Path(config)
    else:
        found = config_for_paths(paths)
    return project_settings(found, paths)


def load_settings(path: Path) -> Settings:
    """Settings from a pyproject.toml ([tool.nosync-fix]) or a bare TOML file of our keys."""
    data = _read_toml(path)
    table = _tool_table(data).get(SECTION) if "tool" in data else None
    if table is None:
        if path.name == "pyproject.toml":
            table = {}
        else:
            table = data
    if not isinstance(table, Mapping):
        raise ConfigError(f"{path}: [tool.{SECTION}] must be a table")
    if "line-length" not in table and path.name == "pyproject.toml":
        formatter = formatter_line_length(path.parent)
        if formatter is not None:
            table = {**table, "line-length": formatter[0]}
    return settings_from_table(table, path)


def settings_from_table(table: Mapping[str, Any], path: Path | None = None) -> Settings:
    where = f"{path}: " if path else ""
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}unknown key {unknown[0]!r} in [tool.{SECTION}]")

    def strings(key: str) -> tuple[str, ...] | None:
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}{key} must be a list of strings")
        return tuple(value)

    def boolean(key: str) -> bool | None:
        if key not in table:
            return None
        if not isinstance(table[key], bool):
            raise ConfigError(f"{where}{key} must be true or false")
        return table[key]

    # extend-per-file-ignores adds to per-file-ignores, as in ruff (the codes of a pattern
    # named in both are the union: each pair ignores its own codes).
    per_file: list[tuple[str, tuple[str, ...]]] = []
    for key in ("per-file-ignores", "extend-per-file-ignores"):
        raw = table.get(key, {})
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where}{key} must be a table of glob = [codes]")
        for pattern, codes in raw.items():
            if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                raise ConfigError(f"{where}{key}.{pattern!r} must be a list of codes")
            per_file.append((pattern, tuple(codes)))

    dtype = table.get("accumulate-dtype", "float64")
    if not isinstance(dtype, str):
        raise ConfigError(f"{where}accumulate-dtype must be a string")
    hot = strings("hot-functions") or ()
    try:
        max_size = parse_size(table["max-file-size"]) if "max-file-size" in table else None
    except ConfigError as error:
        raise ConfigError(f"{where}{error}") from None
    line_length = table.get("line-length")
    if line_length is not None and (isinstance(line_length, bool) or not isinstance(
            line_length, int) or line_length < 0):
        raise ConfigError(f"{where}line-length must be a whole number (0: never split)")
    settings = Settings().with_overrides(
        line_length=line_length,
        select=strings("select"),
        extend_select=strings("extend-select"),
        ignore=strings("ignore"),
        unsafe_fixes=boolean("unsafe-fixes"),
        fix=boolean("fix"),
        all_paths=boolean("all-paths"),
        exclude=strings("exclude"),
        extend_exclude=strings("extend-exclude"),
        force_exclude=boolean("force-exclude"),
        per_file_ignores=tuple(per_file),
        hot_functions=frozenset(hot),
        accumulate_dtype=dtype,
        max_file_size=max_size,
        root=path.parent.resolve() if path else None,
        source=path,
    )
    try:
        return settings.validate()
    except ConfigError as error:
        raise ConfigError(f"{where}{error}") from None


def _tool_table(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``[tool]``, or nothing when ``tool`` is not a table (``tool = 5``): it is not ours
    to judge, and no [tool.nosync-fix] can be in it."""
    tool = data.get("tool", {})
    return tool if isinstance(tool, Mapping) else {}


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays and tables
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None


@functools.lru_cache(maxsize=16)
def _split_patterns(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """The name-only patterns as one compiled regex (a walk asks thousands of times),
    and the patterns with a slash, which :func:`_glob_matches` handles."""
    names = [p.rstrip("/") for p in patterns if "/" not in p.rstrip("/")]
    paths = tuple(p for p in patterns if "/" in p.rstrip("/"))
    regex = "|".join(fnmatch.translate(n) for n in names) or r"(?!)"
    return re.compile(regex), paths


def _glob_matches(pattern: str, path: str | Path, root: Path | None,
                  walk_root: Path | None = None) -> bool:
    path = Path(path)
    if "/" not in pattern.rstrip("/"):
        return fnmatch.fnmatch(path.name, pattern.rstrip("/"))
    pattern = pattern.strip("/")
    candidates = [path.as_posix()]
    for base in (root, walk_root):
        if base is None:
            continue
        try:
            candidates.append(path.absolute().relative_to(base.absolute()).as_posix())
        except ValueError:
            pass
    return any(fnmatch.fnmatch(c, pattern) or fnmatch.fnmatch(c, pattern + "/*")
               for c in candidates)
