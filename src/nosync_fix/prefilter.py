"""The pre-filter: which files cannot contain a finding, decided before LibCST parses them.

LibCST's parse and metadata cost ten to twenty times what Python's own ``ast``
parse costs, and most files of a code base hold nothing a rule could report.
:func:`scan` parses a file with ``ast`` and walks it once, looking for the
*signals* the rules act on (:class:`Signal`) inside the regions that can be hot
paths. A rule that declares the signals it needs (``Rule.signals``) is not run
on a file without them; a file on which no selected rule needs running is not
parsed by LibCST at all.

Soundness is the whole point: every hot region of :mod:`nosync_fix.analysis.hotpaths`
is a hot region here (this scan's regions are a superset); an expression "may
involve a tensor" (:class:`~nosync_fix.maybe_tensors.MaybeTensors`) wherever the
analysis could call some part of it a tensor, and an index "may be a mask"
wherever the rules could take it for a boolean tensor.
``tests/test_prefilter.py`` and ``tests/test_maybe_tensors.py`` check all three,
and that findings and fixes are the same with the pre-filter on and off.

Hot regions (a superset of ``HotPaths``): ``for``/``while`` bodies and ``while``
tests; comprehension elements, conditions and inner loops; the whole of a
function named ``forward`` in a class with bases, ``*_step``, a configured hot
function, a function defined directly in a function with a ``*forward*`` parameter
(a decorator of forward methods), or a function decorated with or passed to
``torch.compile`` (or ``torch._dynamo.optimize``), or a function registered as a
per-batch callback (by name). Not hot: the inside of ``__init__`` and the other
set-up functions, collate functions, and the loader methods of classes named
``*Dataset``/``*Sampler`` (or with such a base), unless a hot function is
nested in them. Guards such as ``if not torch.compiler.is_compiling():`` are
ignored here (they only make the analysis's hot region smaller).
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import operator
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from . import syntax
from .analysis import _tables as T
from .maybe_tensors import MaybeTensors


class Signal(enum.Flag):
    """Kinds of code a rule can act on; a file without them needs no analysis by that rule."""

    NONE = 0
    #: A read: ``.item()``, ``.tolist()``, ``.numpy()``, ``.cpu()``, or ``float()``/
    #: ``int()``/``bool()``/``complex()`` or a ``math``/``numpy`` function of one number
    #: (``math.exp(t)``) of what may be a tensor.
    READ = enum.auto()
    #: A read (as ``READ``) that is accumulated: in the value of an augmented
    #: assignment (``total += loss.item()``, any target); in an operand or argument of
    #: an assignment's value that has the target itself as another operand or argument
    #: (``total = total + float(t)``, ``best = max(best, t.item())``, but not
    #: ``total = float(total)``); or in the arguments of an ``update`` method
    #: (``meter.update(loss.item())``).
    ACCUMULATE = enum.auto()
    #: A condition that may involve a tensor ("device" below): the test of
    #: ``if``/``while``/``assert``, of a conditional expression, a comprehension's
    #: ``if`` or a ``case`` guard.
    CONDITION = enum.auto()
    #: Output of values that may involve a tensor: ``print``, the standard logger's
    #: methods on what may be a logger (``logging.info``, ``logger.warning`` with
    #: ``logger = logging.getLogger(...)``) or imported from ``logging``, f-strings,
    #: ``%`` formatting and ``str.format`` of such values. (Metric writers are handed
    #: reads: ``READ``; so is a call of ``add_scalar``/``add_scalars`` or
    #: ``set_postfix``/``set_postfix_str`` with an argument that may be a tensor, which
    #: TensorBoard's writer reads and tqdm's bar formats at once.)
    OUTPUT = enum.auto()
    #: A call to ``synchronize``.
    SYNC = enum.auto()
    #: Data-dependent shapes: ``nonzero``, ``argwhere``, ``masked_select``, ``unique``,
    #: one-argument ``where``, ``equal`` (torch's, or methods of what may be a tensor),
    #: and subscripts of what may be a tensor (or a parameter of ``forward``) by an
    #: index that may be a boolean mask.
    DATA_DEPENDENT = enum.auto()
    #: A store of what may involve a tensor into a subscript of what may be a host
    #: buffer (``buf[i] = v``, ``buf[i] += v``).
    STORE = enum.auto()
    #: In a file that has a ``forward`` or compiles a function and spells an output
    #: call (``print``, ``warn``, ``log``): a call named like an output call (``print``,
    #: ``warn``, a logging method, ``warning_once``), whatever its arguments and
    #: wherever it is, and every function named ``forward`` or compiled (traced code
    #: reaches the output through the functions it calls, so both ends are kept).
    TRACED_OUTPUT = enum.auto()
    #: A read Python makes on its own, which only NSY906 reports: a test for truth
    #: outside a condition (``done = not t``, ``t.any() and x``); text of a value
    #: (``str``, ``repr``, ``format``); ``max``/``min`` of several values, ``any``/
    #: ``all`` of an expression, ``range``; a literal, a comprehension or a name indexed
    #: by a value (``classes[pred]``). Its own signal, so that the rules looking for
    #: reads, conditions or output do not run where only these are found.
    IMPLICIT_READ = enum.auto()


ALL_SIGNALS = functools.reduce(operator.or_, Signal, Signal.NONE)
#: The signals found by walking expressions (the others are found at statements).
_EXPRESSION_SIGNALS = (Signal.READ | Signal.ACCUMULATE | Signal.CONDITION | Signal.OUTPUT
                       | Signal.SYNC | Signal.DATA_DEPENDENT | Signal.STORE
                       | Signal.TRACED_OUTPUT | Signal.IMPLICIT_READ)
#: Names of the calls NSY304 rewrites in traced code.
_TRACED_OUTPUT_NAMES = frozenset({"print", "warn", "warning_once", "info_once"}) | (
    T.LOGGING_METHODS)

_OUTPUT_FUNCTIONS = frozenset({"print", "pprint"})
#: Methods that read a tensor handed to them as it is (TensorBoard's writer, tqdm's bar).
_HANDED_TENSOR_METHODS = T.SCALAR_WRITER_METHODS | {"set_postfix", "set_postfix_str"}
_DATA_DEPENDENT = frozenset({
    "nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "equal",
    "bincount", "histc", "repeat_interleave", "nonzero_static",
})
_COMPILE_NAMES = ("torch.compile", "torch._dynamo.optimize")
_COMPILE_WORDS = re.compile(r"\b(?:compile|optimize)\b")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


@dataclass(frozen=True)
class Need:
    """What one rule needs: any of ``signals``, in hot regions or (``anywhere``) anywhere."""

    signals: Signal
    anywhere: bool = False


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: the signals in hot regions and anywhere in the file."""

    hot: Signal
    anywhere: Signal
    #: The scanner that found them, with its facts about the file (for
    #: :meth:`units_meeting`).
    scanner: _Scanner | None = dataclasses.field(default=None, compare=False, repr=False)

    def signals(self, anywhere: bool) -> Signal:
        return self.anywhere if anywhere else self.hot

    def meets(self, need: Need) -> bool:
        return bool(need.signals & self.signals(need.anywhere))

    def units_meeting(self, needs: Sequence[Need]) -> set[int] | None:
        """The :func:`units` of the file (``id`` of their nodes) in which one of ``needs``
        is met; None when the file cannot be scanned.

        This scans each unit again, up to its first signal that meets a need.
        """
        if self.scanner is None:
            return None
        return self.scanner.units_meeting(needs)

    def compile_aliases(self) -> set[str]:
        """Dotted names that may spell ``torch.compile`` (or ``torch._dynamo.optimize``)
        in the file; empty when none can."""
        return self.scanner.compile_aliases if self.scanner is not None else set()


def units(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef,
                                          ast.ClassDef | None]]:
    """The functions of a module and the methods of its classes, with their class:
    the pieces that :mod:`nosync_fix.slicing` may leave out of the analysis."""
    found: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]] = []
    for statement in tree.body:
        if isinstance(statement, _FUNCTIONS):
            found.append((statement, None))
        elif isinstance(statement, ast.ClassDef):
            found.extend((method, statement) for method in statement.body
                         if isinstance(method, _FUNCTIONS))
    return found


def parse(text: str, filename: str = "<string>") -> ast.Module:
    """``ast`` parse; raises SyntaxError or ValueError (null bytes) for invalid code."""
    with warnings.catch_warnings():  # invalid escapes and the like: the user's business
        warnings.simplefilter("ignore")
        return compile(text, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)


def hot_locations(tree: ast.Module, text: str,
                  hot_functions: Iterable[str] = ()) -> set[tuple[int, int]]:
    """``(line, column)`` of every statement and expression the scan takes to be hot
    (columns in UTF-8 bytes, as ``ast`` counts them); for the tests."""
    scanner = _Scanner(tree, text, frozenset(hot_functions), None)
    scanner.record = set()
    scanner.block(tree.body, _NORMAL)
    return scanner.record


def scan(tree: ast.Module, text: str, hot_functions: Iterable[str] = (),
         needs: Sequence[Need] | None = None) -> Scan:
    """The signals of a parsed module, in hot regions and anywhere.

    With ``needs``, the scan stops as soon as every need is met and skips what
    no need asks about: the answer is then exact for each need (``meets``) and
    nothing more.
    """
    scanner = _Scanner(tree, text, frozenset(hot_functions), needs)
    try:
        scanner.block(tree.body, _NORMAL)
    except _Done:
        pass
    except RecursionError:  # nested too deeply to scan: assume everything
        return Scan(hot=ALL_SIGNALS, anywhere=ALL_SIGNALS)
    return Scan(hot=scanner.hot, anywhere=scanner.anywhere, scanner=scanner)


def _output_in_traced_code(tree: ast.Module, compiled_names: set[str],
                           compiled_definitions: set[int]) -> bool:
    """Whether an output call may sit in code that torch.compile traces, as NSY304 finds
    it, or more: in a ``forward`` method, a compiled function, a function defined in one
    that takes a forward (a decorator of forward methods), or a function of this file that
    one of those calls, directly or not (``self.method()`` of any class of the file, a
    function by its name; a function reaches those defined in it). Most model files log
    only outside their forward (loading weights, building the model), and are then not
    analysed for NSY304 at all."""
    output_names = set(_TRACED_OUTPUT_NAMES)
    by_name: dict[str, list[int]] = {}
    calls: dict[int, set[str]] = {}  # function -> names it calls (and nested functions)
    roots: list[int] = []
    outputs_named: dict[int, set[str]] = {}  # function -> names it may output with
    # One walk, a stack of (node, the function it is in: 0 for the module); names and
    # constants, half the nodes, hold nothing here and are not pushed.
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        node, owner = pop()
        for child in syntax.children(node):  # markers (ctx, op) hold nothing here
            kind = type(child)
            if kind is ast.Name or kind is ast.Constant:
                continue
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                key = id(child)
                name = child.name  # type: ignore[attr-defined]
                by_name.setdefault(name, []).append(key)
                calls.setdefault(key, set())
                calls.setdefault(owner, set()).add(name)
                if name == "forward" or name in compiled_names or (
                        key in compiled_definitions):
                    roots.append(key)
                args = child.args  # type: ignore[attr-defined]
                if any("forward" in a.arg for a in (*args.posonlyargs, *args.args)):
                    roots.extend(id(s) for s in child.body  # type: ignore[attr-defined]
                                 if isinstance(s, _FUNCTIONS))
                push((child, key))
                continue
            if kind is ast.ImportFrom:
                output_names.update(a.asname for a in child.names  # type: ignore[attr-defined]
                                    if a.asname and a.name in _TRACED_OUTPUT_NAMES)
            elif kind is ast.Call:
                callee = child.func  # type: ignore[attr-defined]
                name = callee.id if isinstance(callee, ast.Name) else (
                    callee.attr if isinstance(callee, ast.Attribute) else None)
                if name is not None:
                    calls.setdefault(owner, set()).add(name)
                    if name != "log" or len(child.args) >= 2:  # not torch.log(x), x.log()
                        outputs_named.setdefault(owner, set()).add(name)
            push((child, owner))
    # Functions with an output call of their own.
    outputs = {key for key, names in outputs_named.items() if names & output_names}
    seen: set[int] = set()
    while roots:
        key = roots.pop()
        if key in seen:
            continue
        if key in outputs:
            return True
        seen.add(key)
        for name in calls.get(key, ()):
            roots.extend(by_name.get(name, ()))
    return False


class _Done(Exception):
    """Every need is met: nothing more to look for."""


# Where the scanner is: cold code, hot code, or code inside a cold function, where
# loops do not make code hot (only a hot function nested inside does).
_NORMAL, _HOT, _COLD = 0, 1, 2


class _Scanner:
    def __init__(self, tree: ast.Module, text: str, hot_functions: frozenset[str],
                 needs: Sequence[Need] | None) -> None:
        self.hot = Signal.NONE
        self.anywhere = Signal.NONE
        self.tree = tree
        self.text = text
        self.hot_functions = hot_functions
        self.pending = list(needs) if needs is not None else None
        self._update_wanted()
        self.compiled_names, self.compiled_definitions, self.compile_aliases = (
            _compiled_functions(tree, text))
        self._tensors: MaybeTensors | None = None
        #: Names of functions registered as per-batch callbacks (HotPaths._batch_callbacks).
        self.callback_names = _batch_callback_names(tree) if any(
            f"{name}(" in text for name in T.CALLBACK_REGISTRATIONS) else set()
        self._element_names: set[str] | None = None
        #: Functions defined directly in a function that takes a forward (a decorator of
        #: forward methods, ``def rope_update(rope_forward)``): its wrapper and helpers.
        self.forward_wrappers: set[int] = set()
        self.record: set[tuple[int, int]] | None = None
        #: ids of the tests of conditions and their `and`/`or`/`not` parts: CONDITION's
        #: (a `not t` or `t and x` elsewhere is an IMPLICIT_READ)
        self._tests: set[int] = set()
        #: The file may hold output calls in traced code (Signal.TRACED_OUTPUT).
        self.traced_output = (
            ("forward" in text or bool(self.compiled_names or self.compiled_definitions))
            and ("print" in text or "warn" in text or "log" in text)
            and _output_in_traced_code(tree, self.compiled_names, self.compiled_definitions))

    def units_meeting(self, needs: Sequence[Need]) -> set[int] | None:
        """See :meth:`Scan.units_meeting`: each unit scanned in the state the whole scan
        gives it, until one of the needs is met."""
        merged = [Need(functools.reduce(operator.or_, (n.signals for n in needs
                                                       if n.anywhere is anywhere)), anywhere)
                  for anywhere in (False, True) if any(n.anywhere is anywhere for n in needs)]
        met: set[int] = set()
        for node, cls in units(self.tree):
            state = self._function_state(node, _NORMAL) if cls is None else (
                self._method_state(cls, node, _NORMAL))
            self.pending = list(merged)
            self._update_wanted()
            self.hot = self.anywhere = Signal.NONE
            try:
                self.function(node, state)
            except _Done:
                pass
            except RecursionError:
                return None
            if any(Scan(self.hot, self.anywhere).meets(n) for n in merged):
                met.add(id(node))
        return met

    @property
    def tensors(self) -> MaybeTensors:
        if self._tensors is None:  # facts about the whole file: computed when first asked
            self._tensors = MaybeTensors(
                self.tree, {"forward"} | self.compiled_names, self.compiled_definitions)
        return self._tensors

    def device(self, node: ast.expr) -> bool:
        """Whether some part of ``node`` may be a tensor or reads one."""
        return self.tensors.device(node)

    def _update_wanted(self) -> None:
        if self.pending is None:
            self.wanted, self.cold_wanted = ALL_SIGNALS, ALL_SIGNALS
            return
        if not self.pending:
            raise _Done
        self.wanted = functools.reduce(operator.or_, (n.signals for n in self.pending))
        self.cold_wanted = functools.reduce(
            operator.or_, (n.signals for n in self.pending if n.anywhere), Signal.NONE)

    def looks_for(self, signals: Signal, state: int) -> bool:
        """Whether finding any of ``signals`` in this state could still matter."""
        # On the flags' integer values: Flag's own `&` costs a call of Python code, and
        # this is asked at every expression.
        return bool(signals._value_ & (self.wanted._value_ if state == _HOT
                                       else self.cold_wanted._value_))

    def signal(self, signal: Signal, state: int) -> None:
        new_hot = state == _HOT and signal not in self.hot
        if signal in self.anywhere and not new_hot:
            return
        self.anywhere |= signal
        if state == _HOT:
            self.hot |= signal
        if self.pending is not None:
            found = Scan(self.hot, self.anywhere)
            self.pending = [n for n in self.pending if not found.meets(n)]
            self._update_wanted()

    # -- regions -----------------------------------------------------------------------------

    def block(self, body: list[ast.stmt], state: int) -> None:
        for statement in body:
            self.statement(statement, state)

    def statement(self, node: ast.stmt, state: int) -> None:
        if self.record is not None and state == _HOT:
            self.record.add((node.lineno, node.col_offset))
        if isinstance(node, _FUNCTIONS):
            self.function(node, self._function_state(node, state))
            return
        if isinstance(node, ast.ClassDef):
            for part in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
                self.expression(part, state)
            self._class_body(node, state)
            return
        loop_state = _HOT if state != _COLD else _COLD
        if isinstance(node, (ast.For, ast.AsyncFor)):
            self.expression(node.iter, state)
            self.target(node.target, state)
            self.block(node.body, loop_state)
            self.block(node.orelse, state)
            return
        if isinstance(node, ast.While):
            self.condition(node.test, loop_state)
            self.block(node.body, loop_state)
            self.block(node.orelse, state)
            return
        if isinstance(node, ast.If):
            self.condition(node.test, state)
            self.block(node.body, state)
            self.block(node.orelse, state)
            return
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and self.looks_for(Signal.ACCUMULATE, state) and (
                self._accumulates_a_read(node)
            ):
                self.signal(Signal.ACCUMULATE, state)
            for target in targets:
                self.target(target, state, node.value if not isinstance(
                    node, ast.AnnAssign) else None)
            if node.value is not None:
                self.expression(node.value, state)
            if isinstance(node, ast.AnnAssign):
                self.expression(node.annotation, state)
            return
        if isinstance(node, ast.Assert):
            self.condition(node.test, state)
            if node.msg is not None:
                self.expression(node.msg, state)
            return
        if isinstance(node, ast.Match):
            self.expression(node.subject, state)
            for case in node.cases:
                if case.guard is not None:
                    self.condition(case.guard, state)
                self.block(case.body, state)
            return
        self._fields(node, state)

    def _fields(self, node: ast.AST, state: int) -> None:
        """Any other node (with, try, return, withitem, handler ...): same state inside."""
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.stmt):
                        self.statement(item, state)
                    elif isinstance(item, ast.expr):
                        if isinstance(node, ast.Delete):
                            self.target(item, state)
                        else:
                            self.expression(item, state)
                    elif isinstance(item, ast.AST):
                        self._fields(item, state)
            elif isinstance(value, ast.expr):
                if field == "optional_vars":
                    self.target(value, state)
                else:
                    self.expression(value, state)
            elif isinstance(value, ast.AST):
                self._fields(value, state)

    def _class_body(self, node: ast.ClassDef, state: int) -> None:
        for statement in node.body:
            if isinstance(statement, _FUNCTIONS):
                self.function(statement, self._method_state(node, statement, state))
            else:
                self.statement(statement, state)

    def _method_state(self, cls: ast.ClassDef, method: ast.FunctionDef | ast.AsyncFunctionDef,
                      state: int) -> int:
        """The state inside a method: ``forward`` of a class with bases is hot, the loader
        methods of a dataset are cold."""
        inner = self._function_state(method, state)
        if method.name == "forward" and cls.bases:
            return _HOT
        if inner != _HOT and method.name in T.DATASET_METHODS and (
            cls.name.endswith(("Dataset", "Sampler"))
            or any((dotted(b) or "").endswith(("Dataset", "Sampler")) for b in cls.bases)
        ):
            return _COLD
        return inner

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, state: int) -> None:
        if self.traced_output and (node.name == "forward" or node.name in self.compiled_names
                                   or id(node) in self.compiled_definitions) and (
                self.looks_for(Signal.TRACED_OUTPUT, state)):
            self.signal(Signal.TRACED_OUTPUT, state)
        for decorator in node.decorator_list:
            self.expression(decorator, state)
        args = node.args
        if any("forward" in a.arg for a in (*args.posonlyargs, *args.args)):
            self.forward_wrappers.update(id(s) for s in node.body if isinstance(s, _FUNCTIONS))
        self._arguments(node.args, state)
        if node.returns is not None:
            self.expression(node.returns, state)
        self.block(node.body, state)

    def _function_state(self, node: ast.FunctionDef | ast.AsyncFunctionDef, state: int) -> int:
        """The state inside a function: hot wins over cold (the superset)."""
        name = node.name
        if (name in self.hot_functions or name in self.compiled_names
                or id(node) in self.compiled_definitions or id(node) in self.forward_wrappers
                or name in self.callback_names
                or (name.endswith(T.STEP_FUNCTION_SUFFIX) and name != T.STEP_FUNCTION_SUFFIX)):
            return _HOT
        if T.is_cold_function_name(name):
            return _COLD
        return state

    def _arguments(self, args: ast.arguments, state: int) -> None:
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None and arg.annotation is not None:
                self.expression(arg.annotation, state)
        for default in (*args.defaults, *args.kw_defaults):
            if default is not None:
                self.expression(default, state)

    # -- signals -----------------------------------------------------------------------------

    def target(self, node: ast.expr, state: int, value: ast.expr | None = None) -> None:
        """An assignment target (of ``value``, in an assignment): subscripts store, their
        parts are read."""
        if isinstance(node, ast.Subscript):
            if value is not None and self.looks_for(Signal.STORE, state) and (
                self.tensors.host_buffer(node.value) and self.device(value)
            ):
                self.signal(Signal.STORE, state)
            self.expression(node.value, state)
            self._index(node, state)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                self.target(element, state, value)
        elif isinstance(node, ast.Starred):
            self.target(node.value, state, value)
        elif isinstance(node, ast.Attribute):
            self.expression(node.value, state)

    def _mark_test(self, test: ast.expr) -> None:
        """Remember ``test`` and its ``and``/``or``/``not`` parts as a condition's (a chain of
        ``not`` walked without recursion)."""
        while True:
            self._tests.add(id(test))
            if isinstance(test, ast.BoolOp):
                for value in test.values:
                    self._mark_test(value)
                return
            if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
                return
            test = test.operand

    def condition(self, test: ast.expr, state: int) -> None:
        self._mark_test(test)
        if self.looks_for(Signal.CONDITION, state) and (
                self.device(test) or self.tensors.mentions_model_argument(test)):
            self.signal(Signal.CONDITION, state)
        self.expression(test, state)

    def expression(self, node: ast.expr, state: int) -> None:
        # Comprehension elements are hot outside cold functions, so an expression in
        # ordinary code is walked whenever something is looked for in hot regions.
        if not self.looks_for(_EXPRESSION_SIGNALS, _HOT if state == _NORMAL else state):
            return
        stack: list[tuple[ast.AST, int]] = [(node, state)]
        while stack:
            current, where = stack.pop()
            if self.record is not None and where == _HOT:
                self.record.add((current.lineno, current.col_offset))  # type: ignore[attr-defined]
            kind = type(current)
            if kind is ast.Call:
                self._call(current, where)  # type: ignore[arg-type]
            elif kind is ast.IfExp:  # `a if <test> else b`: the rules judge the test
                self._mark_test(current.test)  # type: ignore[attr-defined]
                if self.looks_for(Signal.CONDITION, where) and (self.device(
                    current.test  # type: ignore[attr-defined]
                ) or self.tensors.mentions_model_argument(current.test)):  # type: ignore
                    self.signal(Signal.CONDITION, where)
            elif kind is ast.Subscript:
                if isinstance(current.ctx, ast.Load):  # type: ignore[attr-defined]
                    self._index(current, where)  # type: ignore[arg-type]
                    stack.append((current.value, where))  # type: ignore[attr-defined]
                    continue
            elif kind is ast.JoinedStr:
                if self.looks_for(Signal.OUTPUT, where) and (self.device(
                    current  # type: ignore[arg-type]
                ) or self._formats_element(current)):  # type: ignore[arg-type]
                    self.signal(Signal.OUTPUT, where)
            elif (kind is ast.UnaryOp and isinstance(current.op, ast.Not) or (  # type: ignore
                kind is ast.BoolOp
            )) and id(current) not in self._tests:  # `flag = not t`, `t and x` elsewhere
                # what is tested: the operand of `not`, every value of `and`/`or` but the
                # last (which is the result, not tested)
                tested = current.values[:-1] if kind is ast.BoolOp else [  # type: ignore
                    current.operand]  # type: ignore[attr-defined]
                if self.looks_for(Signal.IMPLICIT_READ, where) and any(
                        self.device(value) for value in tested):
                    self.signal(Signal.IMPLICIT_READ, where)
            elif kind is ast.Compare and self.looks_for(Signal.IMPLICIT_READ, where) and any(
                    isinstance(op, (ast.In, ast.NotIn)) and self.device(right)
                    for op, right in zip(current.ops, current.comparators,  # type: ignore
                                         strict=True)):
                self.signal(Signal.IMPLICIT_READ, where)  # `x in t`: `(t == x).any()`, read
            elif kind is ast.BinOp and isinstance(current.op, ast.Mod) and isinstance(  # type: ignore
                current.left, (ast.Constant, ast.JoinedStr)  # type: ignore[attr-defined]
            ) and self.looks_for(Signal.OUTPUT, where) and self.device(
                current.right  # type: ignore[attr-defined]
            ):
                self.signal(Signal.OUTPUT, where)
            elif kind in _COMPREHENSIONS:
                self._comprehension(current, where, stack)  # type: ignore[arg-type]
                continue
            elif kind is ast.Lambda:
                self._arguments(current.args, where)  # type: ignore[attr-defined]
                stack.append((current.body, where))  # type: ignore[attr-defined]
                continue
            for child in syntax.children(current):
                if isinstance(child, ast.expr):
                    stack.append((child, where))
                elif isinstance(child, ast.keyword):
                    stack.append((child.value, where))

    def _comprehension(self, node: ast.expr, state: int,
                       stack: list[tuple[ast.AST, int]]) -> None:
        hot = _HOT if state != _COLD else _COLD
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        for index, generator in enumerate(generators):
            stack.append((generator.iter, state if index == 0 else hot))
            self.target(generator.target, hot)
            for condition in generator.ifs:
                self._mark_test(condition)
                if self.looks_for(Signal.CONDITION, hot) and self.device(condition):
                    self.signal(Signal.CONDITION, hot)
                stack.append((condition, hot))
        for part in ("elt", "key", "value"):
            value = getattr(node, part, None)
            if value is not None:
                stack.append((value, hot))

    def _index(self, subscript: ast.Subscript, state: int) -> None:
        """A subscript's index: a boolean mask of a value that may be a tensor selects a
        data-dependent shape."""
        index = subscript.slice
        base = subscript.value
        if self.looks_for(Signal.DATA_DEPENDENT, state) and self._may_be_mask(index) and (
            self.tensors.tensor(base) or self.tensors.model_argument(base)
            or self.tensors.bound_to_call(base)  # NSY503: `x = model(b)`, `x[keep].mean()`
        ):
            self.signal(Signal.DATA_DEPENDENT, state)
        # `classes[pred]`: a Python sequence indexed by a tensor calls `pred.__index__()`.
        # NSY906 takes only a literal, a comprehension or a name for the sequence.
        if not isinstance(index, (ast.Slice, ast.Tuple, ast.Constant)) and self.looks_for(
                Signal.IMPLICIT_READ, state) and self.tensors.sequence(base) \
                and self.device(index):
            self.signal(Signal.IMPLICIT_READ, state)
        self.expression(index, state)

    def _may_be_mask(self, index: ast.expr) -> bool:
        """An index the rules may take for a boolean mask: one element (``x[m]``,
        ``x[m,]``) that may be a boolean tensor."""
        if isinstance(index, ast.Tuple):
            return len(index.elts) == 1 and self._may_be_mask(index.elts[0])
        return self.tensors.may_be_bool(index)

    def _call(self, call: ast.Call, state: int) -> None:
        func = call.func
        if isinstance(func, ast.Attribute):
            name = func.attr
        elif isinstance(func, ast.Name):
            name = func.id
        else:
            return
        if self.traced_output and name in _TRACED_OUTPUT_NAMES and self.looks_for(
                Signal.TRACED_OUTPUT, state):
            self.signal(Signal.TRACED_OUTPUT, state)
        if name in T.HOST_MATH_FUNCTIONS and self.looks_for(Signal.READ, state) and (
            self._math_of_a_tensor(call)
        ):
            self.signal(Signal.READ, state)
        if name == "update" and isinstance(func, ast.Attribute):
            if self.looks_for(Signal.ACCUMULATE, state) and any(
                self._reads_in(a) for a in (*call.args, *(k.value for k in call.keywords))
            ):
                self.signal(Signal.ACCUMULATE, state)
        elif name in T.READ_METHODS or name in T.SCALAR_READ_BUILTINS or name == "to":
            if self.looks_for(Signal.READ, state) and self._is_read(call):
                self.signal(Signal.READ, state)
        elif name in T.LOGGING_METHODS or name in _OUTPUT_FUNCTIONS:
            # `print(...)`, `warning(...)` imported from logging, `logger.info(...)`; not
            # `self.log(name, t)` or `torch.log(t)`.
            if self.looks_for(Signal.OUTPUT, state) and (
                isinstance(func, ast.Name) or self.tensors.may_be_logger(func.value)
            ) and not any(True for _ in self.tensors.torch_names(func)) and any(
                self.device(a) for a in (*call.args, *(k.value for k in call.keywords))
            ):
                self.signal(Signal.OUTPUT, state)
        elif name in T.COMPARING_BUILTINS and isinstance(func, ast.Name):
            # `max(best, loss)`, `any(x > 0)`, `range(n)`: a tensor compared, tested or
            # counted on the host, in the forms NSY906's `_compared_by` takes
            if self.looks_for(Signal.IMPLICIT_READ, state) and any(
                self.device(value) for value in _compared_values(name, call)
            ):
                self.signal(Signal.IMPLICIT_READ, state)
        elif name in T.TEXT_BUILTINS and isinstance(func, ast.Name):
            # `str(t)`, `repr(t)`, `format(t, ".3f")`: text of the tensor's values
            if self.looks_for(Signal.IMPLICIT_READ, state) and call.args and self.device(
                    call.args[0]):
                self.signal(Signal.IMPLICIT_READ, state)
        elif name == "format" and isinstance(func, ast.Attribute) and isinstance(
                func.value, ast.Constant) and isinstance(func.value.value, str):
            # `"{:.3f}".format(t)` formats a tensor as `f"{t:.3f}"` does.
            if self.looks_for(Signal.OUTPUT, state) and any(
                self.device(a) for a in (*call.args, *(k.value for k in call.keywords))
            ) or self.looks_for(Signal.OUTPUT, state) and any(
                isinstance(a, ast.Name) and a.id in self.element_names for a in call.args):
                self.signal(Signal.OUTPUT, state)
        elif name in _HANDED_TENSOR_METHODS and isinstance(func, ast.Attribute):
            # `writer.add_scalar(tag, t, step)`, `bar.set_postfix(loss=t)`: the writer
            # reads a tensor at once, the bar formats it (NSY303).
            if self.looks_for(Signal.READ, state) and any(
                self.device(a) for a in (*call.args, *(k.value for k in call.keywords))
            ):
                self.signal(Signal.READ, state)
        elif name == "synchronize":
            self.signal(Signal.SYNC, state)
        elif name in _DATA_DEPENDENT or (
            name == "where" and len(call.args) + len(call.keywords) == 1
        ):
            if self.looks_for(Signal.DATA_DEPENDENT, state) and self._on_device(call, name) and (
                    name != "repeat_interleave" or self._may_repeat_by_a_tensor(call)) and (
                    not self.tensors.host_predicate(call)):
                self.signal(Signal.DATA_DEPENDENT, state)

    def _may_repeat_by_a_tensor(self, call: ast.Call) -> bool:
        """``repeat_interleave`` whose result may have a shape that depends on the data, as
        NSY904 tells it: repeats that may be a tensor, and no ``output_size=``. Not
        ``x.repeat_interleave(2, dim=1)`` or ``x.repeat_interleave(self.repeats, dim=1)``
        with ``self.repeats`` a number."""
        if any(k.arg == "output_size" for k in call.keywords):
            return False
        # torch.repeat_interleave(x, repeats) (under any alias); x.repeat_interleave(repeats)
        function_form = "torch.repeat_interleave" in self.tensors.qualified_names(call.func)
        positional = call.args[1:2] if function_form else call.args[:1]
        repeats = positional[0] if positional else next(
            (k.value for k in call.keywords if k.arg == "repeats"), None)
        return repeats is not None and self.tensors.tensor(repeats)

    def _on_device(self, call: ast.Call, name: str) -> bool:
        """``torch.nonzero(m)``, or ``m.nonzero()`` of what may be a tensor (a boolean one,
        a parameter of ``forward``): not ``np.unique(a)`` or ``labels.unique()`` of a
        list."""
        func = call.func
        if any(q == "torch." + name for q in self.tensors.qualified_names(func)):
            return True
        if not isinstance(func, ast.Attribute):
            return False
        receiver = func.value
        return (self.tensors.tensor(receiver) or self.tensors.model_argument(receiver)
                or self.tensors.may_be_bool(receiver))

    def _math_of_a_tensor(self, call: ast.Call) -> bool:
        """``math.exp(t)``, ``np.sqrt(t + 1)``: a read of ``t`` if it is a tensor."""
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            return False
        return any(q.rpartition(".")[0] in T.HOST_MATH_LIBRARIES
                   for q in self.tensors.qualified_names(call.func)) and self.device(
            call.args[0])

    @property
    def element_names(self) -> set[str]:
        """Loop variables over a name that may be a tensor the analysis does not type
        (``rules._host.iterated_tensor``): NSY906 reports their conversions and formats.
        Computed when first asked (one more walk of the file)."""
        if self._element_names is None:
            self._element_names = _element_names(self.tree)
        return self._element_names

    def _formats_element(self, text: ast.JoinedStr) -> bool:
        """``f"{w:.2f}"`` with ``w`` one of :attr:`element_names` (a format spec)."""
        return any(isinstance(v, ast.FormattedValue) and v.format_spec is not None
                   and isinstance(v.value, ast.Name) and v.value.id in self.element_names
                   for v in text.values)

    def _is_read(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Name) and len(call.args) == 1 and isinstance(
                call.args[0], ast.Name) and call.args[0].id in self.element_names or (
                isinstance(func, ast.Attribute) and func.attr == "item" and isinstance(
                func.value, ast.Name) and func.value.id in self.element_names):
            return True  # int(i), w.item() of an element (see element_names)
        if isinstance(func, ast.Attribute):
            if func.attr == "to":
                return _names_cpu(call)
            if func.attr == "cpu":
                # Whatever the receiver: NSY202 collects copies of unknown values too
                # (`preds.append(model(x).cpu().numpy())`).
                return True
            if func.attr in ("item", "tolist") and self.tensors.reads_of_unknowns:
                return True  # the analysis reads an unknown receiver too, in such a file
            if func.attr == "numpy" and not call.args and not call.keywords and (
                    self.tensors.reads_of_unknowns):
                return True  # NSY906 reports `x.numpy()` of an unknown x: arrays have none
            return func.attr in T.READ_METHODS and self.tensors.tensor(func.value)
        if isinstance(func, ast.Name) and func.id in T.SCALAR_READ_BUILTINS:
            # The analysis reads with a builtin only a tensor: `float(t)`.
            return not (len(call.args) == 1 and not call.keywords) or self.device(call.args[0])
        return False

    def _reads_in(self, value: ast.expr) -> bool:
        return any(isinstance(node, ast.Call) and self._is_read(node)
                   for node in syntax.walk(value))

    def _accumulates_a_read(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> bool:
        """``t += r``, or ``t = t + r`` / ``t = max(t, r)``, with a read in ``r``."""
        if isinstance(node, ast.AugAssign):
            return self._reads_in(node.value)
        value = node.value
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = {t.id for target in targets for t in syntax.walk(target)
                 if isinstance(t, ast.Name)}
        if isinstance(value, ast.BinOp):
            parts = [value.left, value.right]
        elif isinstance(value, ast.Call):
            parts = [*value.args, *(k.value for k in value.keywords)]
        else:
            return False
        return any(isinstance(p, ast.Name) and p.id in names for p in parts) and any(
            self._reads_in(p) for p in parts if not (isinstance(p, ast.Name) and p.id in names))


def _element_names(tree: ast.Module) -> set[str]:
    """Names bound as the element of a loop over a name (``for w in X``, ``for i, w in
    enumerate(X)``, ``reversed(X)``, also in comprehensions), ``X`` a parameter of a
    function of the file or bound to an index of a ``.generate(...)`` call: a superset of
    the elements ``rules._host.iterated_tensor`` finds."""
    parameters: set[str] = set()
    generated: set[str] = set()
    loops: list[tuple[ast.expr, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            parameters.update(a.arg for a in (*args.posonlyargs, *args.args,
                                              *args.kwonlyargs))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            loops.append((node.target, node.iter))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            value = node.value
            while isinstance(value, ast.Subscript):
                value = value.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and (
                    value.func.attr == "generate"):
                generated.add(node.targets[0].id)
    names: set[str] = set()
    for target, iterable in loops:
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and (
                iterable.func.id in ("enumerate", "reversed")) and len(iterable.args) == 1:
            iterable = iterable.args[0]
        if not (isinstance(iterable, ast.Name) and iterable.id in parameters | generated):
            continue
        if isinstance(target, ast.Tuple) and len(target.elts) == 2:
            target = target.elts[1]
        if isinstance(target, ast.Name):
            names.add(target.id)
    return names


def _batch_callback_names(tree: ast.Module) -> set[str]:
    """Names passed as functions registered for a per-batch event
    (``trainer.set_callback('on_batch_end', f)``): a superset of what
    ``HotPaths._batch_callbacks`` resolves to definitions."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                node.func.attr in T.CALLBACK_REGISTRATIONS) and len(node.args) == 2:
            event, function = node.args
            if isinstance(event, ast.Constant) and isinstance(event.value, str) and (
                    T.is_per_batch_event(event.value)) and isinstance(function, ast.Name):
                names.add(function.id)
    return names


def _names_cpu(call: ast.Call) -> bool:
    """``t.to("cpu")``, ``t.to(device="cpu")``, ``t.to(torch.device("cpu"))``: a host copy.

    Any "cpu" literal in the device argument counts, so the check over-approximates."""
    device = [k.value for k in call.keywords if k.arg == "device"] + call.args[:1]
    return any(isinstance(node, ast.Constant) and node.value == "cpu"
               for arg in device for node in syntax.walk(arg))


def dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def _compiled_functions(tree: ast.Module, text: str) -> tuple[set[str], set[int], set[str]]:
    """Names passed to ``torch.compile``, the functions decorated with it, and the
    dotted names that may spell it (see :func:`_compile_aliases`).

    A superset of the analysis's: any name passed first to a call that may be
    ``torch.compile`` counts, whatever it is bound to.
    """
    names: set[str] = set()
    definitions: set[int] = set()
    if not _may_compile(text):
        # No spelling of torch.compile can be in the file: every one (an import, an
        # alias, an attribute) has the name `compile` or `optimize` (as a whole word:
        # `optimizer`, in most training files, is not one).
        return names, definitions, set()
    aliases = _compile_aliases(tree)
    stack: list[ast.AST] = [tree]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind is ast.Name or kind is ast.Constant:  # half the nodes; no children
            continue
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            if any(dotted(d.func if isinstance(d, ast.Call) else d) in aliases
                   for d in node.decorator_list):  # type: ignore[attr-defined]
                definitions.add(id(node))
        elif kind is ast.Call and dotted(node.func) in aliases:  # type: ignore[attr-defined]
            first = node.args[0] if node.args else None  # type: ignore[attr-defined]
            if isinstance(first, ast.Name):
                names.add(first.id)
        extend(syntax.children(node))
    return names, definitions, aliases


def _may_compile(text: str) -> bool:
    """Whether ``text`` has the word ``compile`` or ``optimize`` (the substrings first:
    the regular expression's word boundaries cost twenty times more)."""
    return ("compile" in text or "optimize" in text) and bool(_COMPILE_WORDS.search(text))


def _compile_aliases(tree: ast.Module) -> set[str]:
    """Dotted names that may refer to ``torch.compile`` or ``torch._dynamo.optimize``."""
    aliases: set[str] = set(_COMPILE_NAMES)
    for node in syntax.statements(tree):  # imports are statements
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    for target in _COMPILE_NAMES:
                        if target == alias.name or target.startswith(alias.name + "."):
                            aliases.add(alias.asname + target[len(alias.name):])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                local = alias.asname or alias.name
                for target in _COMPILE_NAMES:
                    if target == full or target.startswith(full + "."):
                        aliases.add(local + target[len(full):])
    return aliases


def _compared_values(name: str, call: ast.Call) -> list[ast.expr]:
    """What ``max``/``min``/``any``/``all``/``range`` compare, test or count, in the forms
    NSY906 reports: every argument of ``range`` and of a ``max``/``min`` of several, the
    elements of ``max([a, b])``, and the one tested expression of ``any``/``all`` when it
    makes a tensor (a comparison, a call, an operation); not ``max(x)`` of one name."""
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return []
    if name in ("any", "all"):
        tested = call.args[0] if len(call.args) == 1 else None
        return [tested] if isinstance(tested, (ast.Compare, ast.Call, ast.UnaryOp,
                                               ast.BinOp)) else []
    if name != "range" and len(call.args) == 1:
        only = call.args[0]
        return list(only.elts) if isinstance(only, (ast.List, ast.Tuple)) else []
    return list(call.args)
