"""Turning output arguments into deferred ones: shared by NSY301, NSY302 and NSY303.

An argument of ``print``, a logging call or a metric writer is *deferred* when
every device read in it can wait until the runtime flushes: the read itself
(``loss.item()`` -> ``item(loss)``), arithmetic on reads (``loss.item() * 100``
-> ``item(loss) * 100``, replayed with Python's own operators on the host
value), and string formatting around them (f-strings -> ``fmt``,
``"...".format`` -> ``fmt``, ``"..." % args`` -> ``percent_fmt``). Host
values in the same expression stay as they are: the runtime captures them
when the line runs. A read used any other way (``math.exp(loss.item())``, a
comparison, a comprehension) blocks the fix; the finding says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata.scope_provider import Assignment, ImportAssignment

from .._percent import conversions as percent_conversions
from .._percent import is_numeric
from ..analysis import Kind, ModuleAnalysis
from ..analysis import _tables as T
from ..analysis.base import visit
from ..rewrite import Rewrite
from ._helpers import short
from ._host import host_only

RUNTIME = "nosync_fix.runtime"
#: The module alias used when a runtime name is already taken in the module.
RUNTIME_ALIAS = "nosync_runtime"

#: How each kind of read is spelled with the runtime: (function, conversion argument).
_READS = {"item": ("item", None), "float": ("item", "float"), "int": ("item", "int"),
          "bool": ("item", "bool"), "tolist": ("tolist", None)}
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo,
               cst.Power)


@dataclass
class Plan:
    """What becomes of one argument expression."""

    node: cst.BaseExpression
    #: How many device reads (or tensors formatted as numbers) it defers.
    deferred: int = 0
    #: Runtime functions the new expression calls.
    names: set[str] = field(default_factory=set)
    #: Why the argument cannot be deferred (it still reads the device), or None.
    blocker: str | None = None
    #: The new expression is a template (a string), not a number.
    is_text: bool = False

    @property
    def changed(self) -> bool:
        """Something in the expression is deferred (its node may be the original one)."""
        return self.deferred > 0


def blocked(node: cst.BaseExpression, reason: str) -> Plan:
    return Plan(node, blocker=reason)


class RuntimeNames:
    """How to spell the runtime's functions in one module, and the imports that needs.

    A name the module already uses for something else is spelled through the
    module alias instead (``nosync_runtime.item``), never shadowed.
    """

    def __init__(self, analysis: ModuleAnalysis) -> None:
        self._taken: set[str] = set()
        for scope in {s for s in analysis.md.scopes.values() if s is not None}:
            for assignment in scope.assignments:
                if not _is_runtime_import(assignment):
                    self._taken.add(assignment.name)
            for access in scope.accesses:
                if not access.referents:
                    self._taken.add(access.node.value if isinstance(access.node, cst.Name)
                                    else "")

    def ref(self, name: str) -> cst.BaseExpression:
        if name in self._taken:
            return cst.Attribute(cst.Name(RUNTIME_ALIAS), cst.Name(name))
        return cst.Name(name)

    def call(self, name: str, *args: cst.BaseExpression) -> cst.Call:
        return cst.Call(self.ref(name), [cst.Arg(a) for a in args])

    def imports(self, rewrite: Rewrite, names: set[str]) -> Rewrite:
        for name in sorted(names):
            if name in self._taken:
                rewrite = rewrite.needs_import(RUNTIME, None, RUNTIME_ALIAS)
            else:
                rewrite = rewrite.needs_import(RUNTIME, name)
        return rewrite


def _is_runtime_import(assignment: object) -> bool:
    if not isinstance(assignment, ImportAssignment):
        return False
    node = assignment.node
    if isinstance(node, cst.ImportFrom) and node.module is not None:
        return cst.Module([]).code_for_node(node.module) == RUNTIME
    if isinstance(node, cst.Import):
        return any(cst.Module([]).code_for_node(a.name) == RUNTIME for a in node.names)
    return False


class Planner:
    """Plans the deferred form of argument expressions in one module."""

    def __init__(self, analysis: ModuleAnalysis, names: RuntimeNames) -> None:
        self.analysis = analysis
        self.names = names

    # -- any argument ------------------------------------------------------------------------

    def value(self, expr: cst.BaseExpression) -> Plan:
        """The deferred form of a value that will be formatted (or passed on) later."""
        read = self.analysis.host_read(expr)
        if read is not None and read.how in _READS:
            function, conversion = _READS[read.how]
            args = [read.tensor] + ([cst.Name(conversion)] if conversion else [])
            node = self.names.call(function, *args).with_changes(lpar=expr.lpar, rpar=expr.rpar)
            return Plan(node, 1, {function})
        if isinstance(expr, (cst.FormattedString, cst.ConcatenatedString)):
            return self.template_string(expr)
        if isinstance(expr, cst.Call) and _is_format_call(expr):
            return self._format_call(expr)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo) and (
                string_value(expr.left) is not None):
            return self._percent(expr)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
            return self._combine(expr, {"left": expr.left, "right": expr.right})
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator,
                                                               (cst.Minus, cst.Plus)):
            return self._combine(expr, {"expression": expr.expression})
        if isinstance(expr, cst.Call) and self._is_builtin(expr, ("abs", "round")) and (
                expr.args and all(a.keyword is None and not a.star for a in expr.args)):
            return self._combine_call(expr)
        reading = self.first_read(expr)
        if reading is not None:
            return blocked(expr, f"`{short(reading)}` is used in `{short(expr)}`, which "
                                 "cannot wait for the value")
        return Plan(expr)

    def first_read(self, expr: cst.CSTNode) -> cst.Call | None:
        """The first device read anywhere inside ``expr``."""
        finder = _ReadFinder(self.analysis)
        visit(expr, finder)
        return finder.found

    def is_tensor(self, expr: cst.BaseExpression) -> bool:
        return self.analysis.kind(expr) is Kind.TENSOR

    def device_tensor(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr`` is a tensor whose formatting (or test) reads the device: not one
        certainly in host memory (``rules._host.host_only``: a tokenizer's output, what a
        helper of the file returns made on the CPU, a sum of such values)."""
        return self.is_tensor(expr) and not host_only(self.analysis, expr)

    # -- arithmetic --------------------------------------------------------------------------

    def _combine(self, expr: cst.BaseExpression, children: dict[str, cst.BaseExpression]) -> Plan:
        plans = {name: self.value(child) for name, child in children.items()}
        return self._merge(expr, plans, lambda new: expr.with_changes(**new))

    def _combine_call(self, call: cst.Call) -> Plan:
        first = self.value(call.args[0].value)
        rest = [self.value(a.value) for a in call.args[1:]]
        if any(p.deferred for p in rest):
            return blocked(call, f"`{short(call)}` rounds to a number of digits read from "
                                 "the device")
        plans = {"0": first, **{str(i + 1): p for i, p in enumerate(rest)}}

        def rebuild(new: dict[str, cst.BaseExpression]) -> cst.BaseExpression:
            args = [a.with_changes(value=new.get(str(i), a.value)) for i, a in enumerate(call.args)]
            return call.with_changes(args=args)
        return self._merge(call, plans, rebuild)

    def _merge(self, expr: cst.BaseExpression, plans: dict[str, Plan], rebuild) -> Plan:  # type: ignore[no-untyped-def]
        for plan in plans.values():
            if plan.blocker:
                return blocked(expr, plan.blocker)
        if not any(p.changed for p in plans.values()):
            return Plan(expr)
        if any(p.is_text for p in plans.values()):
            return blocked(expr, f"`{short(expr)}` computes with a formatted string")
        names: set[str] = set().union(*(p.names for p in plans.values()))
        new = rebuild({k: p.node for k, p in plans.items() if p.changed})
        return Plan(new, sum(p.deferred for p in plans.values()), names)

    def _is_builtin(self, call: cst.Call, names: tuple[str, ...]) -> bool:
        return isinstance(call.func, cst.Name) and bool(
            self.analysis.md.qualified_names(call.func) & {f"builtins.{n}" for n in names})

    # -- templates ---------------------------------------------------------------------------

    def template_string(self, expr: cst.FormattedString | cst.ConcatenatedString) -> Plan:
        """An f-string (possibly concatenated with other strings) as ``fmt(template, ...)``."""
        built = self._template(expr)
        if isinstance(built, Plan):
            return built
        template, args, deferred, names, unknown = built
        if not deferred and not unknown:
            return Plan(expr)
        # With nothing known to defer, a field of unknown type may still be a tensor: the
        # runtime reads it at flush time (this form is used if the call is rewritten).
        # A template written over several lines gets its arguments on a line of their own.
        after_template = cst.Comma(whitespace_after=_spacing(
            expr.whitespace_between if isinstance(expr, cst.ConcatenatedString)
            else cst.SimpleWhitespace(" ")))
        call = cst.Call(self.names.ref("fmt"),
                        [cst.Arg(template, comma=after_template)] + [cst.Arg(a) for a in args],
                        lpar=expr.lpar, rpar=expr.rpar)
        return Plan(call, deferred, names | {"fmt"}, is_text=True)

    def _template(self, expr: cst.BaseExpression):  # type: ignore[no-untyped-def]
        """``(template, args, deferred, names, fields of unknown type)`` for a string
        literal, or a blocked Plan."""
        if isinstance(expr, cst.ConcatenatedString):
            left, right = self._template(expr.left), self._template(expr.right)
            for side in (left, right):
                if isinstance(side, Plan):
                    return side
            template = expr.with_changes(left=left[0], right=right[0])
            return (template, left[1] + right[1], left[2] + right[2], left[3] | right[3],
                    left[4] + right[4])
        if isinstance(expr, cst.SimpleString):
            prefix, quote = expr.prefix.lower(), expr.quote
            body = expr.value[len(expr.prefix) + len(quote):-len(quote)]
            if "b" in prefix or ("\\N" in body and "r" not in prefix):
                return blocked(expr, "a string part cannot be made a template")
            body = body.replace("{", "{{").replace("}", "}}")
            return expr.with_changes(value=expr.prefix + quote + body + quote), [], 0, set(), 0
        if isinstance(expr, cst.FormattedString):
            return self._fstring(expr)
        return blocked(expr, "not a string literal")

    def _fstring(self, node: cst.FormattedString):  # type: ignore[no-untyped-def]
        body: list[str] = []
        args: list[cst.BaseExpression] = []
        deferred = unknown = 0
        names: set[str] = set()
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                body.append(part.value)
                continue
            assert isinstance(part, cst.FormattedStringExpression)
            spec = part.format_spec
            if part.equal is not None:
                return self._unfixable_fstring(node, "an f-string `=` field")
            if spec is not None and not all(isinstance(p, cst.FormattedStringText) for p in spec):
                return self._unfixable_fstring(node, "a nested f-string field")
            plan = self.value(part.expression)
            if plan.blocker:
                return plan
            deferred += plan.deferred
            names |= plan.names
            if not plan.changed and part.conversion is None and self.device_tensor(
                    part.expression):
                deferred += 1  # Tensor.__format__ reads a 0-dim tensor: the runtime defers it
            elif not plan.changed and self.analysis.kind(part.expression) is Kind.UNKNOWN:
                unknown += 1
            args.append(plan.node)
            field = "{" + (f"!{part.conversion}" if part.conversion else "")
            if spec is not None:
                field += ":" + "".join(p.value for p in spec)  # type: ignore[union-attr]
            body.append(field + "}")
        prefix = node.prefix.replace("f", "").replace("F", "")
        quote = node.start[len(node.prefix):]
        template = cst.SimpleString(prefix + quote + "".join(body) + node.end)
        return template, args, deferred, names, unknown

    def _unfixable_fstring(self, node: cst.FormattedString, what: str) -> Plan:
        reading = self.first_read(node)
        if reading is None:
            return Plan(node)
        return blocked(node, f"{what} cannot be deferred")

    def _format_call(self, call: cst.Call) -> Plan:
        """``"...".format(args)`` as ``fmt("...", args)``."""
        template = call.func.value  # type: ignore[attr-defined]
        if any(a.star for a in call.args):
            return self._plain_or_blocked(call, "`*`/`**` arguments")
        plans = [self.value(a.value) for a in call.args]
        for plan in plans:
            if plan.blocker:
                return plan
        pairs = list(zip(call.args, plans, strict=True))
        deferred = sum(p.deferred for p in plans) + sum(
            1 for a, p in pairs if not p.changed and self.device_tensor(a.value))
        if not deferred and all(self.analysis.kind(a.value) is Kind.HOST for a in call.args):
            return Plan(call)
        # The line break after `.format(` goes after the template: the arguments stay put.
        after_template = cst.Comma(whitespace_after=_spacing(call.whitespace_before_args))
        args = [cst.Arg(template, comma=after_template)] + [
            a.with_changes(value=p.node) for a, p in pairs]
        names = set().union(*(p.names for p in plans)) | {"fmt"}
        new = cst.Call(self.names.ref("fmt"), args, lpar=call.lpar, rpar=call.rpar)
        return Plan(new, deferred, names, is_text=True)

    def _percent(self, expr: cst.BinaryOperation) -> Plan:
        """``"..." % args`` as ``percent_fmt("...", args)``."""
        plan = self.percent_operand(expr.right, percent_conversions(string_value(expr.left) or ""))
        if plan.blocker:
            return plan
        values = ([e.value for e in expr.right.elements]  # type: ignore[union-attr]
                  if isinstance(expr.right, (cst.Tuple, cst.Dict)) else [expr.right])
        if not plan.changed and all(self.analysis.kind(v) is Kind.HOST for v in values):
            return Plan(expr)
        # Even with nothing known to defer, a value of unknown type may be a tensor that
        # `%f` reads: percent_fmt reads it at flush time (used if the call is rewritten).
        after_template = cst.Comma(whitespace_after=_spacing(expr.operator.whitespace_before))
        call = cst.Call(self.names.ref("percent_fmt"), [
            cst.Arg(expr.left, comma=after_template), cst.Arg(plan.node)],
            lpar=expr.lpar, rpar=expr.rpar)
        return Plan(call, plan.deferred, plan.names | {"percent_fmt"}, is_text=True)

    def percent_operand(self, right: cst.BaseExpression,
                        conversions: dict[int | str, str] | None) -> Plan:
        """The deferred form of what stands right of ``%``: a tuple, a dict or one value."""
        if isinstance(right, cst.Tuple) and not any(isinstance(e, cst.StarredElement)
                                                    for e in right.elements):
            slots: list[int | str] = list(range(len(right.elements)))
        elif isinstance(right, cst.Dict) and all(isinstance(e, cst.DictElement) and
                                                 string_value(e.key) is not None
                                                 for e in right.elements):
            slots = [string_value(e.key) for e in right.elements]  # type: ignore
        elif isinstance(right, (cst.Tuple, cst.Dict, cst.List)):
            return self._plain_or_blocked(right, "these %-arguments")
        else:
            return self.percent_argument(right, None if conversions is None
                                         else conversions.get(0))
        plans = [self.percent_argument(e.value, None if conversions is None  # type: ignore
                                       else conversions.get(slot))
                 for e, slot in zip(right.elements, slots, strict=True)]
        for plan in plans:
            if plan.blocker:
                return plan
        if not any(p.changed for p in plans):
            return Plan(right)
        elements = [e.with_changes(value=p.node)  # type: ignore[union-attr]
                    for e, p in zip(right.elements, plans, strict=True)]
        return Plan(right.with_changes(elements=elements), sum(p.deferred for p in plans),
                    set().union(*(p.names for p in plans)))

    def percent_argument(self, value: cst.BaseExpression, conversion: str | None) -> Plan:
        """The deferred form of an argument of ``%`` formatting with conversion ``conversion``.

        A tensor formatted by ``%f`` (``float(t)``) or ``%d`` (``int(t)``) is left as it
        is: ``percent_fmt`` and ``deferred_log`` read it at flush time. Formatted by
        ``%s`` or ``%r`` it prints ``tensor(...)``: not deferred.
        """
        plan = self.value(value)
        if plan.changed or plan.blocker or not self.device_tensor(value):
            return plan
        if is_numeric(conversion):
            return Plan(value, 1)
        return blocked(value, f"`{short(value)}` is formatted as a tensor (`tensor(...)`), "
                              "which needs the device now")

    def _plain_or_blocked(self, expr: cst.BaseExpression, what: str) -> Plan:
        reading = self.first_read(expr)
        return Plan(expr) if reading is None else blocked(expr, f"{what} cannot be deferred")


def _spacing(whitespace: cst.BaseParenthesizableWhitespace) -> cst.BaseParenthesizableWhitespace:
    """``whitespace`` if it breaks the line, else a single space."""
    if isinstance(whitespace, cst.ParenthesizedWhitespace):
        return whitespace
    return cst.SimpleWhitespace(" ")


def _is_format_call(call: cst.Call) -> bool:
    func = call.func
    return (isinstance(func, cst.Attribute) and func.attr.value == "format"
            and string_value(func.value) is not None)


def string_value(node: cst.BaseExpression) -> str | None:
    """The value of a (possibly concatenated) str literal without f-string parts."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:  # f-string parts have no static value
            return None
        return value if isinstance(value, str) else None
    return None


class _ReadFinder(cst.CSTVisitor):
    def __init__(self, analysis: ModuleAnalysis) -> None:
        self.analysis = analysis
        self.found: cst.Call | None = None

    def visit_Call(self, node: cst.Call) -> bool:
        if self.found is not None:
            return False
        read = self.analysis.host_read(node)
        if read is not None and read.how in _READS:
            self.found = node
            return False
        return True


# -- what is a logging call (NSY302 defers these; NSY301 asks) ---------------------------------


def logging_method(analysis: ModuleAnalysis, call: cst.Call) -> str | None:
    """The level method a call makes on a standard logger (``info``, ``log``...), or None."""
    func = call.func
    for qualified in analysis.md.qualified_names(func):
        module, _, name = qualified.rpartition(".")
        if module == "logging" and name in T.LOGGING_METHODS:
            return name
    if isinstance(func, cst.Attribute) and func.attr.value in T.LOGGING_METHODS and (
            _is_logger(analysis, func.value, 0)):
        return func.attr.value
    return None


def _is_logger(analysis: ModuleAnalysis, expr: cst.BaseExpression, depth: int) -> bool:
    """``logging.getLogger(...)``, ``logging.root``, or a name only ever bound to one."""
    if depth > 3:
        return False
    md = analysis.md
    if isinstance(expr, cst.Call):
        return bool(md.qualified_names(expr.func) & {"logging.getLogger"})
    if md.qualified_names(expr) & {"logging.root"}:
        return True
    if not isinstance(expr, cst.Name):
        return False
    access = md.access(expr)
    referents = list(access.referents) if access is not None else []
    if not referents:
        return False
    for referent in referents:
        value = _bound_value(analysis, referent)
        if value is None or not _is_logger(analysis, value, depth + 1):
            return False
    return True


def _bound_value(analysis: ModuleAnalysis, referent: object) -> cst.BaseExpression | None:
    if not isinstance(referent, Assignment) or not isinstance(referent.node, cst.Name):
        return None
    target = analysis.md.parent(referent.node)
    if isinstance(target, cst.AssignTarget):
        assign = analysis.md.parent(target)
        return assign.value if isinstance(assign, cst.Assign) else None
    if isinstance(target, cst.AnnAssign):
        return target.value
    return None
