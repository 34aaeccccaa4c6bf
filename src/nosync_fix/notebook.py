"""Jupyter notebooks, checked and fixed as ruff does: the code cells as one module.

A notebook's code cells run in order in one namespace, so they are analysed as one
Python module: a training loop in one cell, the function it calls in another. What
IPython adds to Python is not Python: each line that starts a statement with ``%``,
``!``, ``?`` (``%matplotlib inline``, ``!pip install x``, ``x = !ls``, ``obj?``) is
replaced, for the analysis only, by a ``pass`` with the same indentation, and a cell that
opens with a cell magic (``%%bash``) is left out. A string statement between two cells
marks where one ends, so that the fixed module can be cut back into its cells.

A fix is written only when everything comes back where it was: every boundary and every
IPython line in its own cell, unchanged, and the notebook's JSON, read and written again
without the fix, the same bytes as the file (nbformat's layout: one space of indent,
characters not escaped). Otherwise the notebook is left as it is and the run says why.

Positions are the cell's, with cells numbered as Jupyter and ruff number them (every
cell, markdown included, from 1): ``train.ipynb:cell 3:4:5``. Notebooks whose kernel is
not Python are not checked.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .findings import Edit, FileError, Finding, FixResult, LoopSummary

if TYPE_CHECKING:
    from .config import Settings
    from .rules.base import Rule

NOTEBOOK_SUFFIX = ".ipynb"

#: An assignment of a shell or magic command's output: ``files = !ls``, ``t = %timeit -o f()``.
_ASSIGNED_ESCAPE = re.compile(r"[\w.\[\], ()*]+=\s*[!%]")
#: Line magics IPython runs without their ``%`` (automagic), and its shell aliases.
_AUTOMAGIC = re.compile(
    r"(pip|conda|mamba|cd|env|set_env|time|timeit|matplotlib|load_ext|reload_ext|"
    r"autoreload|aimport|run|pylab|capture|sx|system|pwd|ls|mkdir|rmdir|rm|cp|mv|cat|"
    r"who|whos|reset|store|history|config|pdb|debug|prun|bookmark|alias)[ \t]+"
    r"(?![=(\[,:)]|==)")
#: Help on an object: ``obj?``, ``obj.attr??``.
_HELP = re.compile(r"[\w.]+\?\??\s*\Z")
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


class NotebookProblem(Exception):
    """Why a notebook cannot be read, or its fixes cannot be written back (one line)."""


def is_notebook(filename: str) -> bool:
    return filename.endswith(NOTEBOOK_SUFFIX)


@dataclass(frozen=True)
class _Cell:
    """One code cell: where it is, its text, and what the analysis sees of it."""

    index: int  #: its place in the notebook's ``cells``
    text: str  #: the source as stored, joined
    python: str  #: the text analysed: IPython lines hidden, ending in a newline
    #: (placeholder, original) per hidden line, without line endings
    hidden: tuple[tuple[str, str], ...]

    @property
    def number(self) -> int:
        return self.index + 1


@dataclass(frozen=True)
class _Span:
    number: int  #: the cell's number
    first: int  #: the module's line on which the cell starts
    count: int  #: its lines


class Notebook:
    """A notebook read from its JSON text, and the Python module of its code cells."""

    def __init__(self, text: str) -> None:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as error:
            raise NotebookProblem(f"not a valid notebook: {_json_reason(error)}") from None
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            if isinstance(data, dict) and "worksheets" in data:
                raise NotebookProblem("notebook format 3 is not supported; convert it with "
                                      "`jupyter nbconvert --to notebook --inplace`")
            raise NotebookProblem("not a valid notebook: no list of cells")
        self.text = text
        self.data: dict[str, Any] = data
        self.python_kernel = _is_python(data.get("metadata"))
        self.cells: list[_Cell] = []
        counter = 0
        for index, cell in enumerate(data["cells"]):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            if isinstance(source, list) and all(isinstance(s, str) for s in source):
                source = "".join(source)
            if not isinstance(source, str):
                raise NotebookProblem(f"not a valid notebook: cell {index + 1}'s source is "
                                      "neither text nor a list of lines")
            if _opens_with_cell_magic(source):
                continue  # not Python (``%%bash``, ``%%writefile``): left as it is
            python, hidden = _hide_ipython(source, counter)
            counter += len(hidden)
            self.cells.append(_Cell(index, source, python, hidden))
        self.module, self.spans = self._module()

    def _module(self) -> tuple[str, tuple[_Span, ...]]:
        parts: list[str] = []
        spans = []
        line = 1
        for k, cell in enumerate(self.cells):
            if k:
                parts.append(_boundary(cell.number) + "\n")
                line += 1
            count = len(_LINE.findall(cell.python))
            spans.append(_Span(cell.number, line, count))
            parts.append(cell.python)
            line += count
        return "".join(parts), tuple(spans)

    # -- positions -------------------------------------------------------------------------

    def span_of(self, line: int) -> _Span | None:
        """The cell in which the module's ``line`` lies (or the one it ends, for a position
        just past a cell's last line)."""
        for span in self.spans:
            if span.first <= line < span.first + max(span.count, 1):
                return span
        for span in self.spans:
            if line == span.first + span.count:
                return span
        return None

    def finding(self, finding: Finding) -> Finding:
        """``finding`` with the cell's positions (its fix's edits kept only when each lies
        within one cell)."""
        span = self.span_of(finding.line)
        if span is None:
            return finding
        fix = finding.fix
        if fix is not None and fix.edits:
            edits = [self._edit(edit) for edit in fix.edits]
            fix = dataclasses.replace(fix, edits=() if None in edits else tuple(
                e for e in edits if e is not None))
        noqa = finding.noqa_line - span.first + 1 if finding.noqa_line else 0
        return dataclasses.replace(
            finding, line=finding.line - span.first + 1,
            end_line=_within(span, finding.end_line, finding.line - span.first + 1),
            noqa_line=noqa if 1 <= noqa <= span.count else 0, fix=fix, cell=span.number,
            message=self.relabel(finding.message, span))

    def _edit(self, edit: Edit) -> Edit | None:
        span = self.span_of(edit.line)
        if span is None:
            return None
        end = edit.end_line - span.first + 1
        if not 1 <= end <= span.count + 1:
            return None  # it spans a boundary: no cell can carry it
        return dataclasses.replace(edit, line=edit.line - span.first + 1, end_line=end,
                                   cell=span.number)

    def loop(self, loop: LoopSummary) -> LoopSummary:
        span = self.span_of(loop.line)
        if span is None:
            return loop
        return dataclasses.replace(
            loop, line=loop.line - span.first + 1, cell=span.number,
            remaining=tuple((line - span.first + 1, code) for line, code in loop.remaining))

    def relabel(self, message: str, span: _Span | None) -> str:
        """A message naming lines of the module, naming them in their cells (the cell left
        out where it is ``span``'s)."""
        def cell_line(match: re.Match[str]) -> str:
            line = int(match.group(1))
            where = self.span_of(line)
            if where is None:
                return match.group(0)
            named = f"line {line - where.first + 1}"
            if where != span:
                named = f"cell {where.number}, {named}"
            return named

        return re.sub(r"\bline (\d+)", cell_line, message)

    # -- writing back ------------------------------------------------------------------------

    def with_module(self, fixed: str) -> str:
        """The notebook's JSON text with ``fixed`` (the module, fixed) in its cells."""
        pieces = self._pieces(fixed)
        data = json.loads(self.text)  # a copy to change
        layout = _layout(self.text, self.data)
        for cell, piece in zip(self.cells, pieces, strict=True):
            if piece != cell.python and any(
                    original.startswith("from __future__") for _, original in cell.hidden):
                raise NotebookProblem(f"a fix would change cell {cell.number}, whose "
                                      "`from __future__` import must stay its first line")
            for placeholder, original in cell.hidden:
                piece = _restore(piece, placeholder, original, cell.number)
            for other in self.cells:
                if other is not cell and any(p in piece for p, _ in other.hidden):
                    raise NotebookProblem(f"a fix would move an IPython line of cell "
                                          f"{other.number} into cell {cell.number}")
            if not cell.text.endswith("\n") and piece.endswith("\n"):
                piece = piece[:-1]
            if piece == cell.text:
                continue
            stored = data["cells"][cell.index]
            stored["source"] = (_LINE.findall(piece) if isinstance(stored.get("source"), list)
                                else piece)
        return _dumps(data, layout)

    def _pieces(self, fixed: str) -> list[str]:
        lines = _LINE.findall(fixed)
        marks = [i for i, line in enumerate(lines) if line.startswith('"nosync-fix: cell ')]
        expected = [_boundary(cell.number) + "\n" for cell in self.cells[1:]]
        if [lines[i] for i in marks] != expected:
            raise NotebookProblem("a fix would move the boundary between two cells")
        cuts = [-1, *marks, len(lines)]
        return ["".join(lines[a + 1:b]) for a, b in zip(cuts, cuts[1:], strict=False)]

    def cell_diff(self, fixed: Notebook, filename: str) -> str:
        """A unified diff per cell that ``fixed`` (this notebook, fixed) changed, headed
        ``path:cell N`` as ruff heads them."""
        from .engine import unified_diff

        return "".join(unified_diff(before.text, after.text, f"{filename}:cell {before.number}")
                       for before, after in zip(self.cells, fixed.cells, strict=True)
                       if after.text != before.text)


def code_size(source: bytes) -> int | None:
    """The bytes of a notebook's code cells (None for a file that is no notebook: its
    processing says why)."""
    try:
        cells = json.loads(source).get("cells")
        return sum(len(("".join(c["source"]) if isinstance(c["source"], list)
                        else c["source"]).encode("utf-8"))
                   for c in cells if c.get("cell_type") == "code")
    except Exception:  # anything malformed: reported when the notebook is processed
        return None


def process_notebook(source: bytes | str, filename: str, settings: Settings, *, fix: bool,
                     with_edits: bool,
                     rules: Sequence[type[Rule]] | None = None) -> FixResult:
    """:func:`nosync_fix.engine.process_source` for a notebook's JSON text."""
    from .engine import process_python

    raw = source if isinstance(source, bytes) else source.encode("utf-8")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return _failed(filename, raw, f"not a valid notebook: not UTF-8 ({error.reason})")
    try:
        notebook = Notebook(text)
    except NotebookProblem as problem:
        return _failed(filename, raw, str(problem))
    unchanged = FixResult(filename=filename, original=text, fixed=text, fixed_bytes=raw)
    if not notebook.python_kernel or not notebook.cells:
        return unchanged
    result = process_python(notebook.module, filename, settings, fix=fix,
                            with_edits=with_edits, rules=rules)
    if result.error is not None:
        return _failed(filename, raw, notebook.relabel(result.error.message, None),
                       result.error.kind)
    mapped = dataclasses.replace(
        unchanged, findings=tuple(map(notebook.finding, result.findings)),
        applied=tuple(map(notebook.finding, result.applied)),
        loops=tuple(map(notebook.loop, result.loops)))
    if not result.changed:
        return mapped
    try:
        fixed = notebook.with_module(result.fixed)
    except NotebookProblem as problem:
        # Nothing is written; what a check finds is still so, and the run says why.
        checked = process_python(notebook.module, filename, settings, fix=False,
                                 with_edits=with_edits, rules=rules)
        return dataclasses.replace(
            unchanged, findings=tuple(map(notebook.finding, checked.findings)),
            error=FileError(filename, f"fixes not written: {problem}; file left unchanged",
                            "internal"))
    # What remains is found in the fixed module: its positions count in the fixed cells.
    after = Notebook(fixed)
    return dataclasses.replace(mapped, fixed=fixed, fixed_bytes=fixed.encode("utf-8"),
                               findings=tuple(map(after.finding, result.findings)),
                               diff=notebook.cell_diff(after, filename))


# -- helpers ---------------------------------------------------------------------------------


def _failed(filename: str, raw: bytes, message: str, kind: str = "parse") -> FixResult:
    text = raw.decode("utf-8", "replace")
    return FixResult(filename=filename, original=text, fixed=text, fixed_bytes=raw,
                     error=FileError(filename, message, kind))


def _json_reason(error: Exception) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno}, column {error.colno}"
    return "nested too deeply"


def _is_python(metadata: object) -> bool:
    """Whether the notebook's kernel runs Python (a notebook that does not say is taken
    to be Python, as Jupyter and ruff take it)."""
    if not isinstance(metadata, dict):
        return True
    for section, key in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(section)
        if isinstance(value, dict) and isinstance(value.get(key), str):
            return value[key].lower() in ("python", "python3", "ipython")
    return True


def _opens_with_cell_magic(source: str) -> bool:
    for line in source.splitlines():
        if line.strip():
            return line.lstrip().startswith("%%")
    return False


def _boundary(number: int) -> str:
    return f'"nosync-fix: cell {number}"'


def _hide_ipython(source: str, counter: int) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The cell's text with each IPython line that starts a statement (and each line a
    trailing backslash continues it onto) replaced by a ``pass`` of the statement's
    indentation, and the (placeholder, original) pairs."""
    lines = _LINE.findall(source)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    hidden = []
    indent = ""
    for i, first in _ipython_lines(lines):
        line = lines[i].rstrip("\n")
        if first:
            indent = line[:len(line) - len(line.lstrip(" \t"))]
        placeholder = f"{indent}pass  # nosync-fix: IPython line {counter + len(hidden)}"
        hidden.append((placeholder, line))
        lines[i] = placeholder + "\n"
    return "".join(lines), tuple(hidden)


def _is_escape(body: str) -> bool:
    if body.startswith(("%", "!", "?")):
        return True
    if body.startswith("from __future__ import") and not body.rstrip().endswith(("(", "\\")):
        return True  # valid at the top of any cell, not in the middle of one module
    return bool(_ASSIGNED_ESCAPE.match(body) or _HELP.match(body) or _is_automagic(body))


def _is_automagic(body: str) -> bool:
    """A line magic without its ``%`` (IPython's automagic: ``pip install x``, ``cd ..``):
    a magic's name, then what no Python statement starting with that name has."""
    if not _AUTOMAGIC.match(body):
        return False
    try:
        compile(body, "<cell>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return True
    return False  # Python as it stands (``ls -l`` is a subtraction): analysed as such


def _ipython_lines(lines: Sequence[str]) -> list[tuple[int, bool]]:
    """(index, whether it starts the escape) of every line of IPython syntax: each line
    that begins a logical line (outside brackets, strings and backslash continuations: a
    line starting with ``%`` inside brackets is Python's modulo) with an escape, and the
    lines its trailing backslashes continue it onto (``!pip install a \\``)."""
    found = []
    depth = 0
    quote = ""  # the open triple quote, if any
    continued = escaped = False
    for i, line in enumerate(lines):
        if escaped:  # shell text continued: not Python, nothing in it opens anything
            found.append((i, False))
            escaped = line.rstrip("\n").endswith("\\")
            continue
        if not depth and not quote and not continued and _is_escape(line.lstrip(" \t")):
            found.append((i, True))
            escaped = line.rstrip("\n").endswith("\\")
            continue
        depth, quote, continued = _scan(line, depth, quote)
    return found


def _scan(line: str, depth: int, quote: str) -> tuple[int, str, bool]:
    """Bracket depth and open triple quote after ``line``, and whether it ends in a
    backslash continuation."""
    i, n = 0, len(line)
    while i < n:
        if quote:
            end = _string_end(line, i, quote)
            if end < 0:
                return depth, quote, False
            i, quote = end, ""
            continue
        c = line[i]
        if c == "#":
            break
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(depth - 1, 0)
        elif c in "'\"":
            triple = line[i:i + 3]
            if triple in ("'''", '"""'):
                quote, i = triple, i + 3
                continue
            end = _string_end(line, i + 1, c)
            if end < 0:
                break  # unterminated (or continued by a backslash): to the line's end
            i = end
            continue
        elif c == "\\" and line[i + 1:].strip() == "":
            return depth, quote, True
        i += 1
    return depth, quote, False


def _string_end(line: str, i: int, quote: str) -> int:
    """Just past the end of a string whose body starts at ``i``; -1 if not on this line."""
    while i < len(line):
        if line[i] == "\\":
            i += 2
        elif line.startswith(quote, i):
            return i + len(quote)
        else:
            i += 1
    return -1


def _within(span: _Span, line: int, start: int) -> int:
    relative = line - span.first + 1
    return relative if start <= relative <= span.count + 1 else start


def _restore(piece: str, placeholder: str, original: str, number: int) -> str:
    lines = _LINE.findall(piece)
    at = [i for i, line in enumerate(lines) if line.rstrip("\n") == placeholder]
    if len(at) != 1:
        raise NotebookProblem(f"a fix would move or change an IPython line of cell {number}")
    lines[at[0]] = original + lines[at[0]][len(placeholder):]
    return "".join(lines)


def _layout(text: str, data: Any) -> tuple[int | None, bool, bool]:
    """How the notebook's JSON was written (indent, ASCII escapes, final newline): the
    first way that writes its content back as the very same text."""
    final_newline = text.endswith("\n")
    for indent in (1, 2, 4, None, 0, 3):
        for ascii_only in (False, True):
            layout = (indent, ascii_only, final_newline)
            if _dumps(data, layout) == text:
                return layout
    raise NotebookProblem("its JSON is not laid out as nbformat writes it, and would not "
                          "be written back byte for byte")


def _dumps(data: Any, layout: tuple[int | None, bool, bool]) -> str:
    indent, ascii_only, final_newline = layout
    text = json.dumps(data, indent=indent, ensure_ascii=ascii_only)
    return text + "\n" if final_newline else text
