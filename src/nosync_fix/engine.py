"""The engine: parse once, run the selected rules, apply fixes to a fixed point.

For one source text the engine

1. decodes it (PEP 263 cookie, BOM) and skips it cheaply when no selected rule
   could fire (each rule's ``triggers``);
2. parses it once with LibCST and resolves the shared metadata and analyses;
3. runs every selected rule in one batched traversal and keeps the findings on
   hot paths that no ``noqa`` comment suppresses;
4. when fixing: applies the rewrites that do not overlap, adds the imports they
   need (``AddImportsVisitor``) and removes those they leave unused
   (``RemoveImportsVisitor``), checks that the result parses and compiles, and
   starts again from 3 on the new text until nothing is left to fix.

The new text is spliced into the original line by line, so that lines no fix
touched keep their exact bytes (LibCST drops form feeds and a lone ``\\r``).
A rewrite that would not compile is never returned: the file is left as it
was and the failure is reported as an internal error.
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
import traceback
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from . import prefilter
from .analysis import ModuleAnalysis
from .analysis.base import Metadata
from .config import Settings
from .findings import Applicability, Edit, FileError, Finding, Fix, FixResult
from .noqa import Suppressions, parse_suppressions
from .rewrite import Rewrite
from .rules import Report, Rule, RuleContext

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
    """Check (``fix=False``) or fix one source text; never raises for bad input."""
    try:
        text, encoding = decode(source)
    except _FileFailure as failure:
        original = source if isinstance(source, str) else source.decode("utf-8", "replace")
        return _failed(filename, original, source, failure, "utf-8")
    if rules is None:
        rules = settings.rules_for(filename)
    try:
        return _process(text, encoding, source, filename, settings, rules, fix, with_edits)
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
        raise _FileFailure(f"cannot decode: {error}", "parse") from None
    try:
        return source.decode(encoding), encoding
    except (UnicodeDecodeError, LookupError) as error:
        reason = error.reason if isinstance(error, UnicodeDecodeError) else str(error)
        raise _FileFailure(f"cannot decode as {encoding}: {reason}", "parse") from None


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
             rules: Sequence[type[Rule]], fix: bool, with_edits: bool) -> FixResult:
    def result(findings: Sequence[Finding] = (), applied: Sequence[Finding] = (),
               fixed: str = text) -> FixResult:
        fixed_bytes = (source if isinstance(source, bytes) else source.encode(encoding)) if (
            fixed == text) else fixed.encode(encoding)
        return FixResult(
            filename=filename, original=text, fixed=fixed,
            findings=tuple(sorted(findings, key=Finding.sort_key)),
            applied=tuple(applied), diff=unified_diff(text, fixed, filename) if fixed != text
            else "", encoding=encoding, fixed_bytes=fixed_bytes)

    live = live_rules(text, filename, settings, rules)  # raises the parse failure
    if not live:
        return result()
    suppressions = parse_suppressions(text)
    if suppressions.suppresses_all_of_file():
        return result()
    module = parse(text)
    current = text
    applied: list[Finding] = []
    allowed = {Applicability.SAFE} | ({Applicability.UNSAFE} if settings.unsafe_fixes else set())
    for pass_number in range(MAX_PASSES + 1):
        analysis, found = _run_rules(module, filename, settings, live, suppressions)
        fixable = [f for f in found
                   if f.report.rewrite is not None and f.report.rewrite.applicability in allowed]
        if not fix or not fixable:
            findings = [_public(f, analysis, current, with_edits) for f in found]
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
        new_module, accepted = apply_rewrites(module, analysis.md, rewrites)
        done = {id(rewrites[i]) for i in accepted}
        fixed_now = [f.finding for f in fixable if id(f.report.rewrite) in done]
        new_text = splice(current, module.code, new_module.code)
        check_compiles(new_text, encoding, filename, sorted({f.code for f in fixed_now}))
        applied.extend(fixed_now)
        current = new_text
        suppressions = parse_suppressions(current)
        module = parse(current)
        # The fixed text may hold what another rule acts on: ask the pre-filter again.
        live = live_rules(current, filename, settings, rules)
    raise AssertionError("unreachable")


def parse(text: str) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        message = str(error).splitlines()[0] if str(error) else "syntax error"
        raise _FileFailure(
            f"cannot parse: {error.message.splitlines()[0] if error.message else message} "
            f"at line {error.raw_line}, column {error.raw_column + 1}", "parse") from None
    except (SyntaxError, ValueError) as error:
        raise _FileFailure(f"cannot parse: {error}", "parse") from None


def syntax_check(text: str, filename: str) -> ast.Module:
    """The ``ast`` of a text; raises the parse failure for a text that is not valid Python."""
    try:
        return prefilter.parse(text, filename)
    except SyntaxError as error:
        where = f" at line {error.lineno}, column {error.offset}" if error.lineno else ""
        raise _FileFailure(f"cannot parse: {error.msg}{where}", "parse") from None
    except ValueError as error:  # null bytes
        raise _FileFailure(f"cannot parse: {error}", "parse") from None
    except (RecursionError, MemoryError):
        raise _FileFailure("cannot parse: too deeply nested", "parse") from None


def check_compiles(text: str, encoding: str, filename: str, codes: Sequence[str]) -> None:
    try:
        compile(text.encode(encoding), filename, "exec", dont_inherit=True)
        cst.parse_module(text)
    except (SyntaxError, ValueError, cst.ParserSyntaxError) as error:
        raise _FileFailure(
            f"internal error: the fix for {', '.join(codes)} produced code that does not "
            f"compile ({type(error).__name__}: {str(error).splitlines()[0]}); "
            "file left unchanged", "internal") from None


def live_rules(text: str, filename: str, settings: Settings,
               rules: Sequence[type[Rule]]) -> list[type[Rule]]:
    """The rules that may find something in ``text``; raises the failure of invalid code.

    A rule is skipped when the text contains none of its ``triggers``, or when
    it declares the ``signals`` it acts on and the pre-filter finds none of them
    where the rule looks (hot regions, or anywhere with ``--all-paths`` or for a
    rule that is not limited to hot paths).
    """
    tree = syntax_check(text, filename)
    triggered = [rule for rule in rules
                 if not rule.triggers or any(t in text for t in rule.triggers)]
    if not settings.prefilter or all(rule.signals is None for rule in triggered):
        return triggered
    needs = {rule: prefilter.Need(rule.signals, settings.all_paths or not rule.hot_paths_only)
             for rule in triggered if rule.signals is not None}
    found = prefilter.scan(tree, text, settings.hot_functions, list(set(needs.values())))
    return [rule for rule in triggered if rule not in needs or found.meets(needs[rule])]


def _run_rules(module: cst.Module, filename: str, settings: Settings,
               rules: Sequence[type[Rule]],
               suppressions: Suppressions) -> tuple[ModuleAnalysis, list[_Found]]:
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    analysis = ModuleAnalysis(wrapper, settings.hot_functions)
    context = RuleContext(analysis, settings, filename)
    instances = [rule(context) for rule in rules]
    wrapper.visit_batched(instances)
    found: list[_Found] = []
    seen: set[tuple[str, int]] = set()
    for instance in instances:
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


def _fix_summary(rewrite: Rewrite | None) -> Fix | None:
    if rewrite is None:
        return None
    return Fix(applicability=rewrite.applicability, message=rewrite.message)


def _public(found: _Found, analysis: ModuleAnalysis, text: str, with_edits: bool) -> Finding:
    finding = found.finding
    rewrite = found.report.rewrite
    if not with_edits or rewrite is None or finding.fix is None:
        return finding
    new_module, accepted = apply_rewrites(analysis.module, analysis.md, [rewrite])
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


def apply_rewrites(module: cst.Module, md: Metadata,
                   rewrites: Sequence[Rewrite]) -> tuple[cst.Module, list[int]]:
    """Apply the rewrites that do not overlap an earlier one; return the indices applied.

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
    chosen = [rewrites[i] for i in accepted]
    new_module = module.visit(_Applier(chosen))
    context = CodemodContext()
    needs_imports = False
    for rewrite in chosen:
        for spec in rewrite.imports:
            AddImportsVisitor.add_needed_import(context, spec.module, spec.obj, spec.asname)
            needs_imports = True
    if needs_imports:
        new_module = AddImportsVisitor(context).transform_module(new_module)
    removals = [spec for rewrite in chosen for spec in rewrite.maybe_unused]
    if removals:
        context = CodemodContext()
        for spec in removals:
            RemoveImportsVisitor.remove_unused_import(context, spec.module, spec.obj)
        new_module = RemoveImportsVisitor(context).transform_module(new_module)
    return new_module, accepted


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
    matcher = difflib.SequenceMatcher(None, rendered_lines, rewritten_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(original_lines[i1:i2])
        else:
            out.extend(rewritten_lines[j1:j2])
    return "".join(out)


def text_edits(before: str, after: str) -> tuple[Edit, ...]:
    """Line-granular edits that turn ``before`` into ``after`` (ruff's JSON edit shape)."""
    old, new = split_lines(before), split_lines(after)
    edits = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edits.append(Edit(content="".join(new[j1:j2]), line=i1 + 1, column=1,
                          end_line=i2 + 1, end_column=1))
    return tuple(edits)
