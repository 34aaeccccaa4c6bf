"""The engine: parse once, run the selected rules, apply fixes to a fixed point.

For one source text the engine

1. decodes it (PEP 263 cookie, BOM), parses it with Python's ``ast`` (invalid
   code is reported here) and keeps the rules that may fire: those whose
   ``triggers`` occur in the text and, for rules that declare ``signals``, those
   whose signals the pre-filter (:mod:`nosync_fix.prefilter`) finds in a hot
   region; with no rule left, the file is done without LibCST;
2. parses it once with LibCST; metadata and analyses are resolved on first use.
   When only findings are asked for, LibCST gets the slice of the text that the
   live rules can act on (:mod:`nosync_fix.slicing`: the functions and methods
   that cannot matter are left out, their lines kept); when a finding there needs
   its fix applied or its edits, the whole text is analysed instead;
3. runs the remaining rules in one batched traversal and keeps the findings on
   hot paths that no ``noqa`` comment suppresses; a fallback rule (NSY906) is then
   handed what the other rules reported (suppressed or not, selected or not: with a
   fallback selected, every rule runs) and reports the reads nobody else did;
4. when fixing: applies the rewrites that do not overlap, adds the imports they
   need (``AddImportsVisitor``) and removes those they leave unused
   (``RemoveImportsVisitor``), checks that the result parses and compiles, and
   starts again from 3 on the new text (asking the pre-filter again) until
   nothing is left to fix.

The new text is spliced into the original line by line, so that lines no fix
touched keep their exact bytes (LibCST drops form feeds and a lone ``\\r``).
A rewrite that would not compile is never returned: the file is left as it
was and the failure is reported as an internal error.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import functools
import inspect
import io
import re
import sys
import tokenize
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from . import iteration, prefilter, slicing, syntax
from .analysis import ModuleAnalysis
from .analysis._tables import is_test_file_name
from .analysis.base import Metadata, Source, parsing, walk
from .config import Settings
from .findings import Applicability, Edit, FileError, Finding, Fix, FixResult
from .noqa import Suppressions, parse_suppressions
from .notebook import is_notebook
from .rewrite import Rewrite
from .rules import Report, Rule, RuleContext
from .wrap import wrap_new_long_lines

#: Fix passes before giving up: each pass applies every non-overlapping fix.
MAX_PASSES = 10

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class _FileFailure(Exception):
    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class _Found:
    report: Report
    finding: Finding


# -- public entry points ---------------------------------------------------------------------


def process_source(
    source: bytes | str,
    filename: str,
    settings: Settings,
    *,
    fix: bool,
    with_edits: bool = True,
    rules: Sequence[type[Rule]] | None = None,
) -> FixResult:
    """Check (``fix=False``) or fix one source text; never raises for bad input. A
    ``filename`` ending in ``.ipynb`` names a Jupyter notebook's JSON text
    (:mod:`nosync_fix.notebook`)."""
    if is_notebook(filename):
        from .notebook import process_notebook

        return process_notebook(source, filename, settings, fix=fix, with_edits=with_edits,
                                rules=rules)
    return process_python(source, filename, settings, fix=fix, with_edits=with_edits,
                          rules=rules)


def process_python(
    source: bytes | str,
    filename: str,
    settings: Settings,
    *,
    fix: bool,
    with_edits: bool = True,
    rules: Sequence[type[Rule]] | None = None,
) -> FixResult:
    """:func:`process_source` for Python source text, whatever the file's name."""
    try:
        text, encoding = decode(source)
    except _FileFailure as failure:
        original = source if isinstance(source, str) else source.decode("utf-8", "replace")
        return _failed(filename, original, source, failure, "utf-8")
    if rules is None:
        rules = settings.rules_for(filename)
    selected = frozenset(rule.code for rule in rules)
    if any(rule.fallback for rule in rules):
        # The fallback reports what no other rule reports: every rule runs, and the
        # findings of those not selected only tell it what is covered.
        from .rules import all_rules

        rules = all_rules()
    try:
        return _process(text, encoding, source, filename, settings, rules, selected, fix,
                        with_edits)
    except _FileFailure as failure:
        return _failed(filename, text, source, failure, encoding)
    except RecursionError:
        failure = _FileFailure("too deeply nested for the analysis; file left unchanged",
                               "internal")
        return _failed(filename, text, source, failure, encoding)
    except Exception as error:  # a bug in a rule must not take the other files down
        where = traceback.extract_tb(error.__traceback__)[-1]
        failure = _FileFailure(
            f"internal error ({type(error).__name__}: {error} at "
            f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno}); file left unchanged",
            "internal")
        return _failed(filename, text, source, failure, encoding)


def decode(source: bytes | str) -> tuple[str, str]:
    """The text of a source and the encoding to write it back with."""
    if isinstance(source, str):
        return source, "utf-8"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError as error:
        # Without a cookie, a first or second line that is not UTF-8 fails here.
        if "encoding declaration" in str(error):
            encoding = "utf-8"
        else:
            raise _FileFailure(f"cannot decode: {error}", "parse") from None
    try:
        return source.decode(encoding), encoding
    except UnicodeDecodeError as error:
        line = source.count(b"\n", 0, error.start) + 1
        raise _FileFailure(f"cannot decode as {encoding}: {error.reason} at line {line}",
                           "parse") from None
    except LookupError as error:
        raise _FileFailure(f"cannot decode: {error}", "parse") from None


def unified_diff(before: str, after: str, filename: str) -> str:
    """A unified diff like ruff's and git's, with a marker for a missing final newline."""
    old, new = split_lines(before), split_lines(after)
    out = []
    for line in difflib.unified_diff(old, new, fromfile=filename, tofile=filename):
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


def split_lines(text: str) -> list[str]:
    """Lines with their own line endings; only \\n, \\r\\n and \\r end a line."""
    return _LINES.findall(text)


# -- one file --------------------------------------------------------------------------------


def _process(text: str, encoding: str, source: bytes | str, filename: str, settings: Settings,
             rules: Sequence[type[Rule]], selected: frozenset[str], fix: bool,
             with_edits: bool) -> FixResult:
    tree: ast.Module | None = None  # stays None only where no rule runs: no findings

    def result(findings: Sequence[Finding] = (), applied: Sequence[Finding] = (),
               fixed: str = text) -> FixResult:
        fixed_bytes = (source if isinstance(source, bytes) else source.encode(encoding)) if (
            fixed == text) else fixed.encode(encoding)
        return FixResult(
            filename=filename, original=text, fixed=fixed,
            findings=tuple(sorted(_per_iteration(findings, fixed, text, tree, settings),
                                  key=Finding.sort_key)),
            loops=() if fix or not findings else iteration.loop_summaries(
                findings, tree, _applicable(settings)),
            applied=tuple(applied), diff=unified_diff(text, fixed, filename) if fixed != text
            else "", encoding=encoding, fixed_bytes=fixed_bytes)

    # Python's verdict on every input, in every mode, fixes or not: as ruff reports it.
    test_module = is_test_file_name(filename)
    triggered = _triggered_rules(text, settings, rules, test_module=test_module)
    if not triggered:  # no rule can find anything: no ``ast`` needed (nor any finding)
        source_compiles(text, filename)
        return result()
    tree = syntax_check(text, filename)
    tree_compiles(tree, filename)
    live, found = _live_rules(text, tree, settings, triggered)
    if not live:
        return result()
    suppressions = parse_suppressions(text)
    if suppressions.suppresses_all_of_file():
        return result()
    with _recursion_limit_for(nesting_depth(tree)):
        findings = _findings_of_slice(text, tree, found, filename, settings, live, selected,
                                      suppressions)
        if findings is not None and not _needs_whole_text(findings, settings, fix, with_edits):
            return result(findings)
        return _analyse(text, tree, encoding, filename, settings, rules, live, selected,
                        suppressions, fix, with_edits, result)


def _per_iteration(findings: Sequence[Finding], fixed: str, text: str,
                   tree: ast.Module | None, settings: Settings) -> list[Finding]:
    """The findings, each fixable one in a loop naming the iteration's other syncs
    (:mod:`nosync_fix.iteration`)."""
    if len(findings) < 2:
        return list(findings)
    if fixed != text:
        try:
            tree = ast.parse(fixed)
        except SyntaxError:
            return list(findings)
    assert tree is not None  # findings come from a parsed text
    return iteration.annotate(findings, tree, _applicable(settings))


def _findings_of_slice(text: str, tree: ast.Module, found: prefilter.Scan | None,
                       filename: str, settings: Settings, live: list[type[Rule]],
                       selected: frozenset[str],
                       suppressions: Suppressions) -> list[Finding] | None:
    """The findings of the live rules on the part of ``text`` they can act on
    (:mod:`nosync_fix.slicing`); None when that is the whole text."""
    if found is None or any(rule.signals is None for rule in live):
        return None
    relevant = slicing.relevant_text(tree, text, found, [_need(rule, settings) for rule in live])
    if relevant is None:
        return None
    try:
        module = parse(relevant)
    except _FileFailure:  # let the whole text decide what to report
        return None
    source = Source(tree)  # the slice keeps every line where it was
    return [f.finding for f in _run_rules(module, filename, settings, live, selected,
                                          suppressions, source)[1]]


def _needs_whole_text(findings: Sequence[Finding], settings: Settings, fix: bool,
                      with_edits: bool) -> bool:
    """Whether the findings of a slice need the analysis of the whole text: to apply
    their fixes or to give their edits."""
    if with_edits:
        return any(f.fix is not None for f in findings)
    if fix:
        allowed = _applicable(settings)
        return any(f.fix is not None and f.fix.applicability in allowed for f in findings)
    return False


def _applicable(settings: Settings) -> set[Applicability]:
    """The fixes that are applied: the safe ones, and with ``--unsafe-fixes`` the unsafe."""
    return {Applicability.SAFE} | ({Applicability.UNSAFE} if settings.unsafe_fixes else set())


def _analyse(text: str, tree: ast.Module, encoding: str, filename: str, settings: Settings,
             rules: Sequence[type[Rule]], live: list[type[Rule]], selected: frozenset[str],
             suppressions: Suppressions, fix: bool, with_edits: bool,
             result: Callable[..., FixResult]) -> FixResult:
    module = parse(text)
    current = text
    applied: list[Finding] = []
    allowed = _applicable(settings)
    for pass_number in range(MAX_PASSES + 1):
        analysis, found = _run_rules(module, filename, settings, live, selected,
                                     suppressions, Source(tree))
        fixable = [f for f in found
                   if f.report.rewrite is not None and f.report.rewrite.applicability in allowed]
        if not fix or not fixable:
            findings = [_public(f, analysis, current, with_edits, settings.line_length)
                        for f in found]
            return result(findings, applied, current)
        if pass_number == MAX_PASSES:
            raise _FileFailure(
                f"fixes did not converge after {MAX_PASSES} passes; file left unchanged",
                "internal")
        # Several findings may share one rewrite (a loop's accumulator, say): apply it once.
        unique: dict[int, Rewrite] = {}
        for f in fixable:
            unique.setdefault(id(f.report.rewrite), f.report.rewrite)  # type: ignore[arg-type]
        rewrites = list(unique.values())
        new_module, accepted = apply_rewrites(module, analysis.md, rewrites,
                                              line_length=settings.line_length)
        done = {id(rewrites[i]) for i in accepted}
        fixed_now = [f.finding for f in fixable if id(f.report.rewrite) in done]
        new_text = splice(current, module.code, new_module.code)
        try:
            new_module = check_compiles(new_text, encoding, filename,
                                        sorted({f.code for f in fixed_now}))
        except _FileFailure:
            input_compiles(text, encoding, filename)  # the input's own fault, if it is
            raise
        applied.extend(fixed_now)
        current = new_text
        suppressions = parse_suppressions(current)
        module = new_module
        # The fixed text may hold what another rule acts on: ask the pre-filter again.
        tree = syntax_check(current, filename)
        live = live_rules(current, tree, settings, rules, test_module=is_test_file_name(filename))
    raise AssertionError("unreachable")


#: Deeper code is not handed to LibCST: its native parser overflows the C stack (and
#: kills the process) on chains of some ten thousand ``and`` terms, which Python accepts.
#: Python itself rejects other expressions nested deeper than about 3000 levels.
MAX_DEPTH = 3000


def nesting_depth(tree: ast.AST) -> int:
    """How deep LibCST's tree for this code will be, from Python's (``and`` chains count
    one level per operand there)."""
    # Level by level (no pair per node): an `and` chain's operands go that much deeper.
    levels: dict[int, list[ast.AST]] = {0: [tree]}
    depth = deepest = 0
    while levels:
        nodes = levels.pop(depth, None)
        if nodes is not None:
            deepest = depth
            below = levels.setdefault(depth + 1, [])
            for node in nodes:
                if type(node) is ast.BoolOp:
                    levels.setdefault(depth + len(node.values), []).extend(  # type: ignore
                        syntax.children(node))
                else:
                    below.extend(syntax.children(node))
            if not below:
                del levels[depth + 1]
        depth += 1
    return deepest


@contextlib.contextmanager
def _recursion_limit_for(depth: int) -> Iterator[None]:
    """Room on Python's stack for LibCST's visitors and the analyses on deep code."""
    if depth > MAX_DEPTH:
        raise _FileFailure(f"nested {depth} levels deep, more than nosync-fix can analyse "
                           f"safely ({MAX_DEPTH}); file left unchanged", "parse")
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, 2000 + 8 * depth))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


_INDENT_FORM_FEEDS = re.compile(r"^[ \t\f]*\f", re.M)


def parse(text: str) -> cst.Module:
    """LibCST's tree of a text that Python has already accepted.

    A form feed in the indentation resets Python's column count; LibCST's tokenizer
    gets such lines wrong (a bogus dedent error, or the form feed dropped). It is
    given the text without them, which Python reads the same; :func:`splice` puts
    the original bytes back on every line no fix touches.
    """
    if "\f" in text:
        text = _INDENT_FORM_FEEDS.sub("", text)
    try:
        with parsing():
            return cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        message = str(error).splitlines()[0] if str(error) else "syntax error"
        raise _FileFailure(
            f"LibCST cannot parse this file, which Python accepts: "
            f"{error.message.splitlines()[0] if error.message else message} "
            f"at line {error.raw_line}, column {error.raw_column + 1}; file left unchanged",
            "parse") from None
    except (SyntaxError, ValueError) as error:
        raise _FileFailure(f"LibCST cannot parse this file, which Python accepts: {error}; "
                           "file left unchanged", "parse") from None


def syntax_check(text: str, filename: str) -> ast.Module:
    """The ``ast`` of a text; raises the parse failure for a text that is not valid Python."""
    try:
        return prefilter.parse(text, filename)
    except SyntaxError as error:
        where = f" at line {error.lineno}, column {error.offset}" if error.lineno else ""
        newer = newer_syntax(text, error)
        raise _FileFailure(f"cannot parse: {error.msg}{where}" + (f": {newer}" if newer else ""),
                           "parse") from None
    except ValueError as error:  # null bytes
        raise _FileFailure(f"cannot parse: {error}", "parse") from None
    except (RecursionError, MemoryError):
        raise _FileFailure("cannot parse: too deeply nested", "parse") from None


#: Syntax that a later Python accepts, by the start of the line where an earlier one
#: fails: (pattern, what it is, the first Python that has it).
_NEWER_SYNTAX = (
    (re.compile(r"\s*except\s*\*"), "`except*` (PEP 654)", (3, 11)),
    (re.compile(r"\s*type\s+\w+\s*(\[|=)"), "a `type` statement (PEP 695)", (3, 12)),
    (re.compile(r"\s*(async\s+)?def\s+\w+\s*\["), "type parameters (PEP 695)", (3, 12)),
    (re.compile(r"\s*class\s+\w+\s*\["), "type parameters (PEP 695)", (3, 12)),
)


#: The words of Python 3.11's refusals of f-strings that PEP 701 (Python 3.12) allows: the
#: same quotes inside (read as the string's end: an unmatched bracket, a missing ``}``),
#: a backslash, a comment. Its other refusals (``{x!z}``, a single ``}``, ``{*a}``) stand.
_PEP_701_REFUSALS = ("f-string: unmatched", "f-string: expecting '}'",
                     "f-string expression part cannot include")


def newer_syntax(text: str, error: SyntaxError) -> str | None:
    """What to say when ``text`` fails to parse because it is written for a newer Python
    than the one running (the error's line starts with syntax that Python added later)."""
    running = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info < (3, 12) and any(
            word in (error.msg or "") for word in _PEP_701_REFUSALS):
        return ("Python 3.12 accepts more in f-strings (PEP 701: the same quotes inside, "
                f"backslashes, comments); nosync-fix is running on Python {running}")
    if not error.lineno:
        return None
    lines = split_lines(text)
    if not 0 < error.lineno <= len(lines):
        return None
    line = lines[error.lineno - 1]
    for pattern, what, version in _NEWER_SYNTAX:
        if sys.version_info < version and pattern.match(line):
            return (f"{what} needs Python {'.'.join(map(str, version))} or newer; "
                    f"nosync-fix is running on Python {running}")
    return None


def input_compiles(text: str, encoding: str, filename: str) -> None:
    """Raises the parse failure of a text that Python parses but does not compile (a late
    ``from __future__``, an unbound ``nonlocal``): only the compiler checks those."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text.encode(encoding), filename, "exec", _flags(filename), dont_inherit=True)
    except SyntaxError as error:
        raise _does_not_compile(error) from None
    except ValueError:
        pass  # not the compiler's verdict: let the caller's failure stand


def source_compiles(text: str, filename: str) -> None:
    """:func:`syntax_check` and :func:`tree_compiles` for a file that no rule needs the
    ``ast`` of: Python's own parse and compile, in one pass in C, cost less than half the
    ``ast`` parse alone. A text they reject goes the long way, which says why."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, filename, "exec", _flags(filename), dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree_compiles(syntax_check(text, filename), filename)


def tree_compiles(tree: ast.Module, filename: str) -> None:
    """:func:`input_compiles` for the ``ast`` already parsed: the compiler's checks
    (symbol table, ``__future__``) without parsing again, about 40% of a parse's time.
    Run on every input, so that a check reports what Python would refuse to run."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(tree, filename, "exec", _flags(filename), dont_inherit=True)
    except SyntaxError as error:
        raise _does_not_compile(error) from None
    except (ValueError, RecursionError, MemoryError):
        pass  # not a verdict on the code (deep code is judged by the analysis' own limit)


def _flags(filename: str) -> int:
    """The compiler's flags for a file: a notebook's cells may ``await`` at their top
    level, as IPython runs them."""
    return ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if is_notebook(filename) else 0


def _does_not_compile(error: SyntaxError) -> _FileFailure:
    where = f" at line {error.lineno}" if error.lineno else ""
    return _FileFailure(f"does not compile: {error.msg}{where} (Python parses it, but its "
                        "compiler rejects it); file left unchanged", "parse")


def check_compiles(text: str, encoding: str, filename: str,
                   codes: Sequence[str]) -> cst.Module:
    """LibCST's tree of a fixed text, after checking that Python compiles it."""
    try:
        with warnings.catch_warnings():  # the user's `x is 1` is not ours to warn about
            warnings.simplefilter("ignore")
            compile(text.encode(encoding), filename, "exec", _flags(filename), dont_inherit=True)
        return parse(text)
    except (SyntaxError, ValueError, _FileFailure) as error:
        raise _FileFailure(
            f"internal error: the fix for {', '.join(codes)} produced code that does not "
            f"compile ({type(error).__name__}: {str(error).splitlines()[0]}); "
            "file left unchanged", "internal") from None


def live_rules(text: str, tree: ast.Module, settings: Settings,
               rules: Sequence[type[Rule]], *, test_module: bool = False) -> list[type[Rule]]:
    """The rules that may find something in ``text`` (whose ``ast`` is ``tree``).

    A rule is skipped when the text contains none of its ``triggers``, or when
    it declares the ``signals`` it acts on and the pre-filter finds none of them
    where the rule looks (hot regions, or anywhere with ``--all-paths`` or for a
    rule that is not limited to hot paths). In a test file (``test_module``) nothing
    is hot: a rule limited to hot paths finds nothing there.
    """
    triggered = _triggered_rules(text, settings, rules, test_module=test_module)
    return _live_rules(text, tree, settings, triggered)[0]


def _triggered_rules(text: str, settings: Settings, rules: Sequence[type[Rule]], *,
                     test_module: bool) -> list[type[Rule]]:
    """The rules whose ``triggers`` ``text`` spells (and, in a test file, where nothing is
    hot, those not limited to hot paths): the others cannot find anything in it."""
    # Each trigger looked for once, and only until one of a rule's is found: an absent
    # one costs a search of the whole text.
    searched: dict[str, bool] = {}

    def present(trigger: str) -> bool:
        found = searched.get(trigger)
        if found is None:
            found = searched[trigger] = trigger in text
        return found

    triggered = [rule for rule in rules
                 if not rule.triggers or any(present(t) for t in rule.triggers)]
    if test_module and not settings.all_paths:
        triggered = [rule for rule in triggered if not rule.hot_paths_only]
    return triggered


def _live_rules(text: str, tree: ast.Module, settings: Settings,
                triggered: Sequence[type[Rule]]) -> tuple[list[type[Rule]], prefilter.Scan | None]:
    """Of the ``triggered`` rules (:func:`_triggered_rules`), those the pre-filter finds
    a signal for, with what it found (None when it did not run)."""
    if not settings.prefilter or all(rule.signals is None for rule in triggered):
        return list(triggered), None
    needs = {rule: _need(rule, settings) for rule in triggered if rule.signals is not None}
    found = prefilter.scan(tree, text, settings.hot_functions, list(set(needs.values())))
    return [rule for rule in triggered if rule not in needs or found.meets(needs[rule])], found


def _need(rule: type[Rule], settings: Settings) -> prefilter.Need:
    assert rule.signals is not None
    return prefilter.Need(rule.signals, settings.all_paths or not rule.hot_paths_only)


def _run_rules(module: cst.Module, filename: str, settings: Settings,
               rules: Sequence[type[Rule]], selected: frozenset[str], suppressions: Suppressions,
               source: Source | None = None) -> tuple[ModuleAnalysis, list[_Found]]:
    """The findings of the ``selected`` rules among ``rules`` (the others run only to tell a
    fallback rule what they report)."""
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    analysis = ModuleAnalysis(wrapper, settings.hot_functions,
                              test_module=is_test_file_name(filename), source=source)
    context = RuleContext(analysis, settings, filename)
    instances = [rule(context) for rule in rules]
    visit_batched(wrapper, instances, analysis.md.walk_order)
    fallbacks = [instance for instance in instances
                 if instance.fallback and instance.code in selected]
    if fallbacks:
        covered = _covered_by([report for instance in instances if not instance.fallback
                               for report in instance.reports], analysis)
        for instance in fallbacks:
            instance.leftovers(covered)
    found: list[_Found] = []
    seen: set[tuple[str, int]] = set()
    for instance in instances:
        if instance.code not in selected:
            continue
        for report in instance.reports:
            if report.rule.hot_paths_only and not settings.all_paths and not (
                analysis.hot.is_hot(report.node)
            ):
                continue
            key = (report.rule.code, id(report.node))
            if key in seen:
                continue
            seen.add(key)
            line, column, end_line, end_column = analysis.md.position(report.node)
            if suppressions.suppresses(report.rule.code, line):
                continue
            finding = Finding(
                code=report.rule.code, message=report.message, filename=filename,
                line=line, column=column + 1, end_line=end_line, end_column=end_column + 1,
                fix=_fix_summary(report.rewrite), noqa_line=line)
            found.append(_Found(report, finding))
    found.sort(key=lambda f: f.finding.sort_key())
    return analysis, found


def _covered_by(reports: Sequence[Report],
                analysis: ModuleAnalysis) -> Callable[[cst.CSTNode], bool]:
    """Whether a node is covered by one of ``reports``, suppressed or not, hot or not: it is
    (or is inside) a reported node in the same statement (a reported ``if`` covers its
    test, not its body), or inside a node that a report's rewrite replaces."""
    md = analysis.md
    marked = {id(report.node) for report in reports}
    replaced = {id(node) for report in reports if report.rewrite is not None
                for how, node in report.rewrite.targets if how == "replace"}

    def covered(node: cst.CSTNode) -> bool:
        if id(node) in marked or id(node) in replaced:
            return True
        statement = md.statement_of(node)
        for ancestor in md.ancestors(node):
            if id(ancestor) in replaced:
                return True
            if id(ancestor) in marked and (
                    statement is None or ancestor is statement or md.is_ancestor(statement,
                                                                               ancestor)):
                return True
        return False

    return covered


def visit_batched(wrapper: cst.MetadataWrapper, rules: Sequence[Rule],
                  order: Sequence[cst.CSTNode] | None = None) -> None:
    """``wrapper.visit_batched(rules)``, without its cost per rule and per node.

    LibCST gathers each visitor's methods with ``inspect.getmembers``, which reads
    every attribute of the instance (properties included): 19 ms per file for the
    twenty-one rules, more than parsing a small file. It also asks every visitor
    for ``visit_<Node>_<attribute>`` methods at each field of each node, and
    rebuilds every node it leaves. Here the methods are listed once per rule
    class, and the tree is read by :func:`~nosync_fix.analysis.base.walk` (field
    hooks skipped: no rule has one). The calls made, and their order, are the
    same; a rule that declares metadata dependencies or field hooks goes through
    LibCST's own ``visit_batched``. With ``order`` (the module's nodes in the order of
    ``walk``, which the analysis lists anyway) the tree is not walked again.
    """
    if any(rule.METADATA_DEPENDENCIES or _visitor_methods(type(rule))[1] for rule in rules):
        wrapper.visit_batched(rules)
        return
    visits: dict[str, list[Callable[[cst.CSTNode], None]]] = {}
    leaves: dict[str, list[Callable[[cst.CSTNode], None]]] = {}
    for rule in rules:
        for name in _visitor_methods(type(rule))[0]:
            table = visits if name.startswith("visit_") else leaves
            table.setdefault(name.partition("_")[2], []).append(getattr(rule, name))
    if leaves:
        wrapper.module.visit(_Dispatcher(visits, leaves))
        return
    # No leave methods (none of the rules has one): a plain walk in LibCST's order.
    by_type: dict[type, list[Callable[[cst.CSTNode], None]] | None] = {}
    for node in order if order is not None else (node for node, _ in walk(wrapper.module)):
        kind = type(node)
        methods = by_type.get(kind, _UNSEEN)
        if methods is _UNSEEN:
            methods = by_type[kind] = visits.get(kind.__name__)
        if methods is not None:
            for method in methods:  # type: ignore[union-attr]
                method(node)


_UNSEEN: list[Callable[[cst.CSTNode], None]] = []


@functools.cache
def _visitor_methods(rule: type[Rule]) -> tuple[tuple[str, ...], bool]:
    """The ``visit_<Node>``/``leave_<Node>`` methods of a rule class that are not LibCST's
    empty stubs (what ``BatchableCSTVisitor.get_visitors`` finds), and whether it has
    ``visit_<Node>_<attribute>`` ones too."""
    names = tuple(sorted(
        name for name in dir(rule) if name.startswith(("visit_", "leave_"))
        and inspect.isfunction(getattr(rule, name))
        and not getattr(getattr(rule, name), "_is_no_op", False)))
    return names, any("_" in name.partition("_")[2] for name in names)


class _Dispatcher(cst.CSTVisitor):
    """One traversal calling the rules' methods for each node, in the rules' order."""

    def __init__(self, visits: dict[str, list[Callable[[cst.CSTNode], None]]],
                 leaves: dict[str, list[Callable[[cst.CSTNode], None]]]) -> None:
        super().__init__()
        self._visits = visits
        self._leaves = leaves

    def on_visit(self, node: cst.CSTNode) -> bool:
        methods = self._visits.get(type(node).__name__)
        if methods is not None:
            for method in methods:
                method(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        methods = self._leaves.get(type(original_node).__name__)
        if methods is not None:
            for method in methods:
                method(original_node)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass


def _fix_summary(rewrite: Rewrite | None) -> Fix | None:
    if rewrite is None:
        return None
    return Fix(applicability=rewrite.applicability, message=rewrite.message)


def _public(found: _Found, analysis: ModuleAnalysis, text: str, with_edits: bool,
            line_length: int) -> Finding:
    finding = found.finding
    rewrite = found.report.rewrite
    if not with_edits or rewrite is None or finding.fix is None:
        return finding
    new_module, accepted = apply_rewrites(analysis.module, analysis.md, [rewrite],
                                          line_length=line_length)
    if not accepted:
        return finding
    try:
        new_text = splice(text, analysis.module.code, new_module.code)
    except _FileFailure:
        return finding
    edits = text_edits(text, new_text)
    return Finding(**{**finding.__dict__, "fix": Fix(finding.fix.applicability,
                                                      finding.fix.message, edits)})


def _failed(filename: str, text: str, source: bytes | str, failure: _FileFailure,
            encoding: str) -> FixResult:
    raw = source if isinstance(source, bytes) else source.encode(encoding, "surrogateescape")
    return FixResult(filename=filename, original=text, fixed=text,
                     error=FileError(filename, str(failure), failure.kind),
                     encoding=encoding, fixed_bytes=raw)


# -- applying rewrites -----------------------------------------------------------------------


def apply_rewrites(module: cst.Module, md: Metadata, rewrites: Sequence[Rewrite], *,
                   line_length: int = 0) -> tuple[cst.Module, list[int]]:
    """Apply the rewrites that do not overlap an earlier one; return the indices applied.

    New statements longer than ``line_length`` are split as black would
    (:mod:`nosync_fix.wrap`; 0: never).

    Two rewrites overlap when one replaces a node that contains (or is) a node
    the other replaces or inserts next to. The later one waits for the next pass.
    """
    accepted: list[int] = []
    replaced: list[cst.CSTNode] = []
    touched: list[cst.CSTNode] = []
    for index, rewrite in enumerate(rewrites):
        conflict = False
        for how, node in rewrite.targets:
            ancestors = {id(a) for a in md.ancestors(node)} | {id(node)}
            if any(id(r) in ancestors for r in replaced):
                conflict = True
            if how == "replace" and any(
                t is node or md.is_ancestor(node, t) for t in touched
            ):
                conflict = True
        if conflict:
            continue
        accepted.append(index)
        for how, node in rewrite.targets:
            touched.append(node)
            if how == "replace":
                replaced.append(node)
    # Imported here: libcst.codemod pulls in libcst.matchers, half a second of start-up
    # that a run which fixes nothing (a cached one, say) should not pay.
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

    chosen = [rewrites[i] for i in accepted]
    new_module = module.visit(_Applier(chosen))
    context = CodemodContext()
    needs_imports = False
    for rewrite in chosen:
        for spec in rewrite.imports:
            AddImportsVisitor.add_needed_import(context, spec.module, spec.obj, spec.asname)
            needs_imports = True
    if needs_imports:
        new_module = _add_imports(new_module, AddImportsVisitor(context))
    removals = [spec for rewrite in chosen for spec in rewrite.maybe_unused]
    if removals:
        context = CodemodContext()
        for spec in removals:
            RemoveImportsVisitor.remove_unused_import(context, spec.module, spec.obj)
        new_module = RemoveImportsVisitor(context).transform_module(new_module)
    return wrap_new_long_lines(module, new_module, line_length), accepted


def _add_imports(module: cst.Module, visitor: cst.CSTTransformer) -> cst.Module:
    """``visitor`` (LibCST's AddImportsVisitor) applied to ``module`` without walking the
    bodies of its functions and classes.

    It only reads and edits the module's own statements, but its matchers visit every
    node: fixing BART's 200 kB model file took 4.6 s with it, 3.4 s without. Top-level functions
    and classes are shown to it as one bare name each (not a string, which could pass
    for a docstring), with their leading lines, and put back with the leading lines the
    visitor gave that name.
    """
    hidden: dict[str, cst.BaseStatement] = {}
    shown: list[cst.BaseStatement] = []
    for index, statement in enumerate(module.body):
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            key = f"__nosync_hidden_{index}__"
            hidden[key] = statement
            statement = cst.SimpleStatementLine([cst.Expr(cst.Name(key))],
                                                leading_lines=statement.leading_lines)
        shown.append(statement)
    light = visitor.transform_module(module.with_changes(body=shown))  # type: ignore[attr-defined]
    body = []
    for statement in light.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and (
            len(statement.body) == 1) else None
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Name) and (
                small.value.value in hidden):
            # The visitor may change the lines above the first statement after the imports.
            statement = hidden.pop(small.value.value).with_changes(
                leading_lines=statement.leading_lines)
        body.append(statement)
    assert not hidden, "AddImportsVisitor dropped a statement"
    return light.with_changes(body=body)


class _Applier(cst.CSTTransformer):
    def __init__(self, rewrites: Sequence[Rewrite]) -> None:
        super().__init__()
        self.replacements: dict[int, object] = {}
        self.before: dict[int, list[cst.BaseStatement]] = {}
        self.after: dict[int, list[cst.BaseStatement]] = {}
        for rewrite in rewrites:
            for node, new in rewrite.replacements:
                self.replacements[id(node)] = new
            for node, statements in rewrite.before:
                self.before.setdefault(id(node), []).extend(statements)
            for node, statements in rewrite.after:
                self.after.setdefault(id(node), []).extend(statements)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore
        key = id(original_node)
        result = self.replacements.get(key, updated_node)
        if key in self.before or key in self.after:
            middle: list = []
            if isinstance(result, cst.FlattenSentinel):
                middle = list(result.nodes)
            elif not isinstance(result, cst.RemovalSentinel):
                middle = [result]
            result = cst.FlattenSentinel(
                [*self.before.get(key, []), *middle, *self.after.get(key, [])])
        return result


# -- text ------------------------------------------------------------------------------------


def splice(original: str, rendered: str, rewritten: str) -> str:
    """``rewritten`` with every line that no fix touched taken from ``original``.

    ``rendered`` is LibCST's rendering of ``original``; they differ only where
    LibCST does not round-trip (form feeds, a lone carriage return).
    """
    if rendered == original:
        return rewritten
    original_lines, rendered_lines = split_lines(original), split_lines(rendered)
    if len(original_lines) != len(rendered_lines):
        raise _FileFailure("cannot rewrite without changing untouched lines "
                           "(LibCST does not round-trip this file); file left unchanged",
                           "internal")
    rewritten_lines = split_lines(rewritten)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in line_opcodes(rendered_lines, rewritten_lines):
        if tag == "equal":
            out.extend(original_lines[i1:i2])
        else:
            out.extend(rewritten_lines[j1:j2])
    # LibCST drops the final line ending of a file whose lines end with a lone \r: when
    # the last line comes from the rewritten text, give it the original's ending back.
    final = _final_ending(original)
    if final and out and not _final_ending(rendered) and not _final_ending(out[-1]):
        out[-1] += final
    return "".join(out)


def _final_ending(text: str) -> str:
    """The line ending that ``text`` ends with ("" for none)."""
    if text.endswith("\r\n"):
        return "\r\n"
    return text[-1] if text.endswith(("\n", "\r")) else ""


def text_edits(before: str, after: str) -> tuple[Edit, ...]:
    """Line-granular edits that turn ``before`` into ``after`` (ruff's JSON edit shape)."""
    old, new = split_lines(before), split_lines(after)
    edits = []
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal":
            continue
        edits.append(Edit(content="".join(new[j1:j2]), line=i1 + 1, column=1,
                          end_line=i2 + 1, end_column=1))
    return tuple(edits)


#: Above this many line pairs, difflib's matcher (quadratic on repeated lines such as
#: blank ones) is given only the stretches between lines that occur once on each side.
_DIRECT_MATCH_LIMIT = 250_000

Opcode = tuple[str, int, int, int, int]


def line_opcodes(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """``difflib``-style opcodes ("equal" or "replace") turning lines ``a`` into ``b``.

    Fast on big files with local changes: the common head and tail are matched
    directly, and long middles are cut at lines unique on both sides (as patience
    diff does) before difflib sees them. Only "equal" pairs are promised to be equal;
    how the rest is grouped may differ from difflib's own answer.
    """
    ops: list[Opcode] = []
    _match(a, b, 0, len(a), 0, len(b), ops)
    merged: list[Opcode] = []
    for op in ops:
        if op[1] == op[2] and op[3] == op[4]:
            continue
        tag = "equal" if op[0] == "equal" else "replace"
        if merged and (merged[-1][0] == tag):
            _, i1, _, j1, _ = merged[-1]
            merged[-1] = (tag, i1, op[2], j1, op[4])
        else:
            merged.append((tag, op[1], op[2], op[3], op[4]))
    return merged


def _match(a: Sequence[str], b: Sequence[str], a0: int, a1: int, b0: int, b1: int,
           ops: list[Opcode]) -> None:
    head = 0
    while a0 + head < a1 and b0 + head < b1 and a[a0 + head] == b[b0 + head]:
        head += 1
    tail = 0
    while a1 - tail > a0 + head and b1 - tail > b0 + head and a[a1 - tail - 1] == b[b1 - tail - 1]:
        tail += 1
    ops.append(("equal", a0, a0 + head, b0, b0 + head))
    a0, b0, a1, b1 = a0 + head, b0 + head, a1 - tail, b1 - tail
    if a0 == a1 or b0 == b1 or (a1 - a0) * (b1 - b0) <= _DIRECT_MATCH_LIMIT:
        _difflib(a, b, a0, a1, b0, b1, ops, autojunk=False)
    else:
        anchors = _unique_anchors(a, b, a0, a1, b0, b1)
        if not anchors:
            _difflib(a, b, a0, a1, b0, b1, ops, autojunk=True)
        else:
            i, j = a0, b0
            for ai, bj in anchors:
                _match(a, b, i, ai, j, bj, ops)
                ops.append(("equal", ai, ai + 1, bj, bj + 1))
                i, j = ai + 1, bj + 1
            _match(a, b, i, a1, j, b1, ops)
    ops.append(("equal", a1, a1 + tail, b1, b1 + tail))


def _difflib(a: Sequence[str], b: Sequence[str], a0: int, a1: int, b0: int, b1: int,
             ops: list[Opcode], autojunk: bool) -> None:
    matcher = difflib.SequenceMatcher(None, a[a0:a1], b[b0:b1], autojunk=autojunk)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        ops.append((tag, a0 + i1, a0 + i2, b0 + j1, b0 + j2))


def _unique_anchors(a: Sequence[str], b: Sequence[str], a0: int, a1: int, b0: int,
                    b1: int) -> list[tuple[int, int]]:
    """Pairs of lines that occur exactly once in each range, longest in-order chain."""
    def positions(lines: Sequence[str], lo: int, hi: int) -> dict[str, int]:
        seen: dict[str, int] = {}
        for index in range(lo, hi):
            seen[lines[index]] = -1 if lines[index] in seen else index
        return seen

    in_a, in_b = positions(a, a0, a1), positions(b, b0, b1)
    pairs = [(i, in_b[line]) for line, i in in_a.items()
             if i >= 0 and in_b.get(line, -1) >= 0]
    pairs.sort()
    # Longest chain with increasing positions in b (patience sorting).
    tails: list[int] = []
    links: list[int] = [-1] * len(pairs)
    tops: list[int] = []
    for index, (_, j) in enumerate(pairs):
        low, high = 0, len(tails)
        while low < high:
            mid = (low + high) // 2
            if tails[mid] < j:
                low = mid + 1
            else:
                high = mid
        if low == len(tails):
            tails.append(j)
            tops.append(index)
        else:
            tails[low] = j
            tops[low] = index
        links[index] = tops[low - 1] if low else -1
    chain: list[tuple[int, int]] = []
    current = tops[-1] if tops else -1
    while current >= 0:
        chain.append(pairs[current])
        current = links[current]
    return chain[::-1]
