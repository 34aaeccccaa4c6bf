"""The golden fixture tree: golden/<CODE>/<case>.in.py with expected output and findings.

Each case is
  <case>.in.py        the input; an optional first line ``# golden: <options>`` sets
                      options: --unsafe-fixes, --all-paths, --select CODES,
                      --accumulate-dtype float64|float32
  <case>.out.py       the expected fixed source (absent: the input must stay unchanged)
  <case>.findings     the expected findings in the input, one per line:
                      ``LINE:COL CODE FIX`` with FIX one of safe, unsafe, none
                      (empty file: no findings)
  <case>.messages     optional: the findings' full messages, one per line,
                      ``LINE:COL CODE MESSAGE`` (pins wording that must fit the code
                      it points at: "every step" or "every N steps", device or CPU)

By default only the folder's rule is selected. Set NOSYNC_UPDATE_GOLDEN=1 to
write the .out.py and .findings files from the current behaviour (then review
every change with git diff).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from nosync_fix import Settings

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


@dataclass(frozen=True)
class Case:
    code: str
    name: str
    input: Path

    @property
    def output(self) -> Path:
        return self.input.with_name(self.name + ".out.py")

    @property
    def findings(self) -> Path:
        return self.input.with_name(self.name + ".findings")

    @property
    def messages(self) -> Path:
        return self.input.with_name(self.name + ".messages")

    def settings(self) -> Settings:
        text = self.input.read_text(encoding="utf-8")
        first = text.splitlines()[0] if text else ""
        options = shlex.split(first.split(":", 1)[1]) if first.startswith("# golden:") else []
        select: tuple[str, ...] = (self.code,)
        unsafe = all_paths = False
        dtype = "float64"
        i = 0
        while i < len(options):
            option = options[i]
            if option == "--unsafe-fixes":
                unsafe = True
            elif option == "--all-paths":
                all_paths = True
            elif option == "--select":
                i += 1
                select = tuple(options[i].split(","))
            elif option == "--accumulate-dtype":
                i += 1
                dtype = options[i]
            else:
                raise ValueError(f"{self.input}: unknown golden option {option}")
            i += 1
        return Settings(select=select, unsafe_fixes=unsafe, all_paths=all_paths,
                        accumulate_dtype=dtype)

    def __str__(self) -> str:
        return f"{self.code}/{self.name}"


def cases() -> list[Case]:
    found = []
    for folder in sorted(p for p in GOLDEN.iterdir() if p.is_dir()):
        for source in sorted(folder.glob("*.in.py")):
            found.append(Case(folder.name, source.name[: -len(".in.py")], source))
    return found


def format_findings(findings) -> str:  # type: ignore[no-untyped-def]
    lines = []
    for f in findings:
        fix = f.fix.applicability.value if f.fix is not None else "none"
        lines.append(f"{f.line}:{f.column} {f.code} {fix}")
    return "\n".join(lines) + ("\n" if lines else "")


def format_messages(findings) -> str:  # type: ignore[no-untyped-def]
    lines = [f"{f.line}:{f.column} {f.code} {' '.join(f.message.split())}" for f in findings]
    return "\n".join(lines) + ("\n" if lines else "")
