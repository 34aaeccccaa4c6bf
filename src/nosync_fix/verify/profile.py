"""``nosync-verify --profile script.py [args...]``: where a whole program syncs and breaks.

The script runs as ``python script.py args...`` would run it (``__main__``, its
folder first on ``sys.path``), twice:

1. plainly, with dynamo's graph-break log collected: every break a
   ``torch.compile`` of the program met, at the innermost line of the user's
   code in its traceback (one per compilation, not per call);
2. under the host-read counter of :mod:`.syncs`, which places every read at the
   innermost line of the user's code on the stack. Dynamo does not trace while
   the counter's dispatch mode is active, so compiled code runs eagerly in this
   run and its reads are counted too: the reads a graph break would make.

The user's code is every file under the script's folder (and the working
folder) that is not part of an installed package. Each line is then matched
with nosync-fix's static findings for its file (``--all-paths``): the rule
that fixes or reports it, or "no rule", which is the gap a user should know
about.
"""

from __future__ import annotations

import os
import re
import runpy
import sys
import sysconfig
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .breaks import _FRAME, _graph_break_log, _reason
from .syncs import _Reads, counting

_PACKAGE_DIRS = tuple({os.path.realpath(p) + os.sep for p in (
    sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
    sysconfig.get_paths()["stdlib"])})
_NAMES_HOST = re.compile(r"""\.cpu\(|\.numpy\(|["']cpu["']""")
_OWN_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep


@dataclass
class Line:
    """One line of the user's code that reads the device or breaks a graph."""

    filename: str
    line: int
    code: str = ""
    reads: Counter[str] = field(default_factory=Counter)
    breaks: Counter[str] = field(default_factory=Counter)
    #: The static findings on the line: (code, "safe fix" / "unsafe fix" / "report").
    rules: list[tuple[str, str]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(self.reads.values()) + sum(self.breaks.values())

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.filename, "line": self.line, "code": self.code,
                "reads": sum(self.reads.values()), "read_kinds": dict(self.reads),
                "breaks": sum(self.breaks.values()), "break_reasons": dict(self.breaks),
                "rules": [{"code": c, "fix": f} for c, f in self.rules]}


@dataclass
class Profile:
    script: str
    argv: list[str]
    lines: list[Line]
    #: Reads made outside the user's code (inside a library, with no user frame above).
    reads_elsewhere: int = 0
    #: How each run ended: "ok", "exit N" or the exception's first line.
    ended: dict[str, str] = field(default_factory=dict)
    #: Copies ``.to(<variable>)`` to the CPU on a CPU run, not counted (see profile_script).
    moves_not_counted: int = 0
    #: Reads made inside ``torch.utils.data`` (a sampler's random indices, collation): CPU
    #: tensors on every device, host-side loading rather than syncs; not counted at a line.
    loader_reads: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"script": self.script, "argv": self.argv, "ended": self.ended,
                "reads_elsewhere": self.reads_elsewhere,
                "moves_not_counted": self.moves_not_counted,
                "loader_reads": self.loader_reads,
                "lines": [line.as_dict() for line in self.lines]}


def is_user_file(filename: str, roots: tuple[str, ...]) -> bool:
    """A file of the program being profiled, not of Python, an installed package or
    nosync-fix itself."""
    if not filename or filename.startswith("<"):
        return False
    real = os.path.realpath(filename)
    if real.startswith(_PACKAGE_DIRS) or real.startswith(_OWN_DIR):
        return False
    return real.startswith(roots)


class _UserReads(_Reads):
    """The counter's state, with each read placed at the innermost line of user code."""

    def __init__(self, roots: tuple[str, ...], count_cpu: bool) -> None:
        super().__init__("", count_cpu)
        self.roots = roots
        self._files: dict[str, bool] = {}

    def _line(self) -> Any:
        """(filename, line); 0 when no user frame is on the stack; LOADER when the read
        was made inside torch.utils.data below the user's line."""
        frame = sys._getframe(2)
        loader = False
        while frame is not None:
            filename = frame.f_code.co_filename
            if _LOADER_PART in filename.replace("\\", "/"):
                loader = True
            user = self._files.get(filename)
            if user is None:
                user = self._files[filename] = is_user_file(filename, self.roots)
            if user:
                return LOADER if loader else (os.path.realpath(filename), frame.f_lineno)
            frame = frame.f_back  # type: ignore[assignment]
        return 0


#: Where the DataLoader's own code lives, and the site its reads are counted at.
_LOADER_PART = "/torch/utils/data/"
LOADER = 1


def profile_script(script: str, argv: list[str], device: str = "cpu",
                   breaks: bool = True) -> Profile:
    """Run ``script`` with ``argv`` (twice when ``breaks``) and gather its lines."""
    path = Path(script).resolve()
    roots = tuple({str(path.parent) + os.sep, os.path.realpath(os.getcwd()) + os.sep})
    found: dict[tuple[str, int], Line] = {}
    ended: dict[str, str] = {}

    def at(filename: str, line: int) -> Line:
        key = (filename, line)
        if key not in found:
            found[key] = Line(filename, line)
        return found[key]

    if breaks:
        with _graph_break_log() as collected:
            ended["breaks run"] = _run(path, argv)
        for message in collected.messages:
            place = _user_frame(message, roots)
            if place is not None and ("Graph break" in message or "graph break" in message):
                at(*place).breaks[_reason(message)] += 1

    reads = _UserReads(roots, count_cpu=device == "cpu")
    with counting(reads, device) as count:
        ended["reads run"] = _run(path, argv)
    elsewhere = loader = 0
    for (site, kind), n in count.by_site.items():
        if site == 0:
            elsewhere += n
        elif site == LOADER:
            loader += n
        else:
            at(*site).reads[kind] += n

    lines = list(found.values())
    _match_findings(lines)
    moves = 0
    if device == "cpu":
        # On a CPU run `x.to(device)` is a copy to the CPU as much as `x.cpu()` is; on the
        # accelerator it was written for it goes the other way. Only a line that names
        # the CPU (or numpy) is taken for a copy to the host.
        for line in lines:
            if line.reads.get("to host") and not _NAMES_HOST.search(line.code):
                moves += line.reads.pop("to host")
        lines = [line for line in lines if line.count]
    lines.sort(key=lambda x: (-x.count, x.filename, x.line))
    return Profile(str(path), list(argv), lines, reads_elsewhere=elsewhere, ended=ended,
                   moves_not_counted=moves, loader_reads=loader)


def _user_frame(message: str, roots: tuple[str, ...]) -> tuple[str, int] | None:
    """The innermost frame of the user's code in a graph-break message's traceback."""
    frames = [(m["file"], int(m["line"])) for m in _FRAME.finditer(message)]
    for file, line in reversed(frames):
        if is_user_file(file, roots):
            return os.path.realpath(file), line
    return None


@contextmanager
def _as_main(path: Path, argv: list[str]):  # type: ignore[no-untyped-def]
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(path), *argv]
    sys.path.insert(0, str(path.parent))
    try:
        yield
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def _run(path: Path, argv: list[str]) -> str:
    """Run the script as ``__main__``; how it ended, in a few words."""
    import torch._dynamo

    torch._dynamo.reset()  # each run compiles afresh: its breaks are its own
    with _as_main(path, argv):
        try:
            runpy.run_path(str(path), run_name="__main__")
        except SystemExit as stop:
            code = stop.code
            return "ok" if code in (None, 0) else f"exit {code}"
        except Exception as error:  # the program's failure: report what was counted
            first = str(error).strip().splitlines()
            return f"{type(error).__name__}: {first[0] if first else ''}".strip()
    return "ok"


def _match_findings(lines: list[Line]) -> None:
    """Fill each line's code and the static findings that cover it."""
    from ..config import Settings
    from ..engine import process_source
    from ..findings import Applicability

    by_file: dict[str, list[Line]] = {}
    for line in lines:
        by_file.setdefault(line.filename, []).append(line)
    for filename, its_lines in by_file.items():
        try:
            source = Path(filename).read_bytes()
        except OSError:
            continue
        text = source.decode("utf-8", errors="replace").splitlines()
        result = process_source(source, filename, Settings(all_paths=True, unsafe_fixes=True),
                                fix=False)
        for line in its_lines:
            if 0 < line.line <= len(text):
                line.code = text[line.line - 1].strip()
            for finding in result.findings:
                if finding.line <= line.line <= (finding.end_line or finding.line):
                    fix = "report" if finding.fix is None else (
                        "unsafe fix" if finding.fix.applicability is Applicability.UNSAFE
                        else "safe fix")
                    if (finding.code, fix) not in line.rules:
                        line.rules.append((finding.code, fix))


def render(profile: Profile, top: int | None = None) -> str:
    """The ranked lines, one per line, as a terminal table."""
    shown = profile.lines[:top] if top else profile.lines
    out = [f"nosync-verify --profile {_rel(profile.script)} {' '.join(profile.argv)}".rstrip(),
           "  ".join(f"{k}: {v}" for k, v in profile.ended.items()), ""]
    if not shown:
        out.append("No host read and no graph break in the program's own code.")
    else:
        width = min(50, max(len(f"{_rel(x.filename)}:{x.line}") for x in shown))
        out.append(f"{'reads':>7} {'breaks':>6}  {'where':<{width}} {'rule':<22} code")
        for line in shown:
            rules = ", ".join(f"{c} ({f})" for c, f in line.rules) or "no rule"
            kinds = "/".join(k for k, _ in line.reads.most_common(2))
            where = f"{_rel(line.filename)}:{line.line}"
            out.append(f"{sum(line.reads.values()):>7} {sum(line.breaks.values()):>6}  "
                       f"{where:<{width}} {rules:<22} {_shorten(line.code, 60)}"
                       + (f"  [{kinds}]" if kinds else ""))
        for line in shown:
            for reason, n in line.breaks.items():
                out.append(f"  break at {_rel(line.filename)}:{line.line} (x{n}): "
                           f"{_shorten(reason, 100)}")
        silent = [line for line in shown if not line.rules]
        out += ["", f"{len(shown)} lines; {len(silent)} with no rule (no finding of "
                    "nosync-fix covers them)."]
    if profile.moves_not_counted:
        out.append(f"{profile.moves_not_counted} copies `.to(<device>)` to the CPU not counted: "
                   "on this CPU run they cannot be told from moves to an accelerator.")
    if profile.loader_reads:
        out.append(f"{profile.loader_reads} reads made by the DataLoader itself (its sampler and "
                   "collation, on CPU tensors on every device) not counted at a line.")
    if profile.reads_elsewhere:
        out.append(f"{profile.reads_elsewhere} reads made inside libraries, with no line of "
                   "the program on the stack.")
    return "\n".join(out)


def _rel(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return path


def _shorten(text: str, width: int) -> str:
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= width else text[:width - 1] + "…"
