"""Tensor facts: is this expression a device tensor, a host value, or unknown?

The answer is three-valued on purpose. A rule may rewrite a read only when the
receiver is ``Kind.TENSOR`` (or, for a few unsafe fixes, ``Kind.UNKNOWN`` under
the conditions of :meth:`TensorFacts.unknown_read_rewritable`); a ``HOST`` value
is never rewritten. When the evidence disagrees the answer is ``UNKNOWN``.

The analysis is flow-insensitive within a scope: a name's value is the join of
everything ever assigned to it there, plus the evidence of how it is used
(``x.backward()`` makes ``x`` a tensor). Internally values carry a finer class
(modules, numpy arrays, containers) than the public three-valued ``Kind``.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Iterator

import libcst as cst
from libcst.metadata.scope_provider import (
    Access,
    Assignment,
    BaseAssignment,
    BuiltinAssignment,
    ImportAssignment,
)

from . import _tables as T
from .base import (
    Metadata,
    call_name,
    compares_with_text,
    dotted_name,
    positional_args,
    sole_value,
    visit,
)


class Kind(enum.Enum):
    """What an expression evaluates to, as far as syncs are concerned."""

    TENSOR = "tensor"
    HOST = "host"
    UNKNOWN = "unknown"


class Value(enum.Enum):
    """The finer classes behind :class:`Kind`."""

    TENSOR = "tensor"
    MODULE = "module"  # an nn.Module (calling it gives tensors)
    ARRAY = "array"  # numpy (or another array library): has .item() too
    HOST = "host"  # numbers, strings, shapes, dtypes, configuration
    CONTAINER = "container"  # list, tuple, dict, set built on the host
    UNKNOWN = "unknown"

    @property
    def kind(self) -> Kind:
        if self is Value.TENSOR:
            return Kind.TENSOR
        if self is Value.UNKNOWN:
            return Kind.UNKNOWN
        return Kind.HOST


def join(values: Iterable[Value | None]) -> Value:
    """The value of a name assigned each of ``values`` (``None`` = no information)."""
    seen = {v for v in values if v is not None}
    if not seen:
        return Value.UNKNOWN
    if len(seen) == 1:
        return next(iter(seen))
    if seen <= {Value.HOST, Value.ARRAY}:
        return Value.ARRAY
    return Value.UNKNOWN


_HOST_ANNOTATIONS = frozenset({
    "builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.bytes",
    "builtins.complex", "torch.device", "torch.dtype", "torch.Size",
})
_TORCH_HOST_NAMESPACES = (
    "torch.cuda.", "torch.backends.", "torch.distributed.", "torch.optim.", "torch.utils.",
    "torch.multiprocessing.", "torch.profiler.", "torch.autograd.profiler.", "torch.amp.",
    "torch.cuda", "torch.mps.", "torch.xpu.", "torch.hub.", "torch.onnx.", "torch.export.",
)
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception"})
#: The types whose ``isinstance`` test proves a value is no tensor, and what it is then
#: (a tensor is an instance of none of them; it *is* an ``Iterable``, a ``Sized``
#: and a ``Container``, which are not here).
_NARROWING_TYPES = {
    **dict.fromkeys(
        ("builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.bytes",
         "builtins.complex", "builtins.type", "numbers.Number", "numbers.Complex",
         "numbers.Real", "numbers.Rational", "numbers.Integral", "os.PathLike", "pathlib.Path",
         "pathlib.PurePath", "pathlib.PosixPath", "pathlib.WindowsPath"), "host"),
    **dict.fromkeys(
        ("builtins.dict", "builtins.list", "builtins.tuple", "builtins.set",
         "builtins.frozenset", "collections.OrderedDict", "collections.defaultdict",
         "collections.Counter", "collections.abc.Mapping", "collections.abc.MutableMapping",
         "collections.abc.Sequence", "collections.abc.MutableSequence", "typing.Mapping",
         "typing.MutableMapping", "typing.Sequence", "typing.MutableSequence", "typing.Dict",
         "typing.List", "typing.Tuple"), "container"),
}

#: Nodes whose code may run again: a binding in one reaches the uses before it.
_LOOPS = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
#: What :meth:`TensorFacts._narrowed` answers where a failed test of ``torch.Tensor``
#: proves a name no tensor (nor anything else).
_NO_TENSOR = object()


class _InProgress:
    """Marker for a value being computed (a cycle such as ``x = x + 1``)."""


_IN_PROGRESS = _InProgress()


class TensorFacts:
    """Answers "is this a device tensor?" for the expressions of one module."""

    def __init__(self, md: Metadata) -> None:
        self.md = md
        self._memo: dict[int, Value | _InProgress] = {}
        self._config: dict[int, tuple[cst.BaseExpression, bool]] = {}  # _config_chain
        self._assign_memo: dict[int, Value | _InProgress] = {}
        self._class_attrs: dict[int, dict[str, list[tuple[str, cst.CSTNode]]]] = {}
        self._module_classes: dict[int, bool] = {}
        self._collator_classes: dict[int, bool] = {}
        # For _reaching: ids of plain assignment lines, statements' places in blocks.
        self._killer_lines: dict[int, int | None] = {}
        self._blocks: dict[int, dict[int, int]] = {}
        self._chains: dict[int, dict[int, int]] = {}

    # The module-wide scans run on first use: most files never need them.

    @functools.cached_property
    def _imports(self) -> set[str]:
        return self._scan_imports()

    @functools.cached_property
    def _evidence_scan(self) -> tuple[set[tuple[int, str]], set[tuple[int, str]]]:
        return self._scan_evidence()

    @property
    def _evidence(self) -> set[tuple[int, str]]:
        return self._evidence_scan[0]

    @property
    def _counter_evidence(self) -> set[tuple[int, str]]:
        return self._evidence_scan[1]

    # -- public API --------------------------------------------------------------------------

    def kind(self, expr: cst.CSTNode) -> Kind:
        """TENSOR, HOST or UNKNOWN for an expression of this module."""
        return self.value(expr).kind

    def is_tensor(self, expr: cst.CSTNode) -> bool:
        return self.value(expr) is Value.TENSOR

    def is_host(self, expr: cst.CSTNode) -> bool:
        return self.value(expr).kind is Kind.HOST

    def is_module(self, expr: cst.CSTNode) -> bool:
        return self.value(expr) is Value.MODULE

    def is_array(self, expr: cst.CSTNode) -> bool:
        return self.value(expr) is Value.ARRAY

    @property
    def imports_torch(self) -> bool:
        return bool(self._imports & T.TORCH_LIBRARIES)

    @property
    def imports_array_library(self) -> bool:
        return bool(self._imports & T.ARRAY_LIBRARIES)

    def unknown_read_rewritable(self, receiver: cst.BaseExpression) -> bool:
        """May ``receiver.item()`` or ``.tolist()`` be rewritten (unsafely) on an unknown kind?

        Only in a module that imports torch, where no numpy-like value can reach
        the receiver: the module imports no array library and the receiver does
        not come from a call into another library.
        """
        if self.value(receiver) is not Value.UNKNOWN:
            return False
        if not self.imports_torch or self.imports_array_library:
            return False
        return not self._from_foreign_call(receiver, set())

    def plausible_tensor(self, receiver: cst.BaseExpression) -> bool:
        """Whether a value of unknown kind may well be a tensor, for a report (never for a
        fix): the module imports torch and no call into another library made the value.
        Unlike :meth:`unknown_read_rewritable`, an imported array library does not rule it
        out (``loss = model(x)`` beside ``import numpy as np``)."""
        return self.value(receiver) is Value.UNKNOWN and self.imports_torch and (
            not self._from_foreign_call(receiver, set()))

    def value(self, expr: cst.CSTNode) -> Value:
        key = id(expr)
        cached = self._memo.get(key)
        if isinstance(cached, Value):
            return cached
        if cached is _IN_PROGRESS:
            return Value.UNKNOWN
        self._memo[key] = _IN_PROGRESS
        try:
            result = self._compute(expr)
        finally:
            self._memo.pop(key, None)
        self._memo[key] = result
        return result

    def dtype_class(self, expr: cst.BaseExpression) -> str | None:
        """"bool", "int" or "float" when the dtype family of a tensor expression is certain."""
        if isinstance(expr, cst.Comparison):
            if all(
                isinstance(c.operator, (cst.LessThan, cst.GreaterThan, cst.LessThanEqual,
                                        cst.GreaterThanEqual, cst.Equal, cst.NotEqual))
                for c in expr.comparisons
            ):
                return "bool"
            return None
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
            return self.dtype_class(expr.expression)
        if isinstance(expr, cst.BinaryOperation) and isinstance(
            expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)
        ):
            left, right = self.dtype_class(expr.left), self.dtype_class(expr.right)
            return left if left == right else None
        if isinstance(expr, cst.Call):
            name = call_name(expr)
            qnames = self.md.qualified_names(expr.func)
            if isinstance(expr.func, cst.Attribute) and self.is_tensor(expr.func.value):
                inner = expr.func.value
                if name in ("long", "int", "short", "byte", "char"):
                    return "int"
                if name in ("float", "double", "half", "bfloat16"):
                    return "float"
                if name == "bool":
                    return "bool"
                if name in ("argmax", "argmin", "argsort", "nonzero", "count_nonzero"):
                    return "int"
                if name in ("sum", "cumsum"):
                    if positional_args(expr) or any(a.keyword and a.keyword.value == "dtype"
                                                     for a in expr.args):
                        return None
                    inner_class = self.dtype_class(inner)
                    return "int" if inner_class in ("bool", "int") else inner_class
                if name in ("mean", "std", "var", "sigmoid", "softmax", "log_softmax", "exp",
                            "log", "sqrt", "tanh"):
                    return "float"
                if name in ("eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite",
                            "any", "all", "logical_and", "logical_or", "logical_not"):
                    return "bool"
                if name in ("detach", "clone", "abs", "neg", "max", "min", "amax", "amin",
                            "squeeze", "unsqueeze", "view", "reshape", "flatten", "contiguous"):
                    return self.dtype_class(inner)
                return None
            for q in qnames:
                short = q.rsplit(".", 1)[-1]
                if q.startswith("torch.nn.functional.") and (
                    short.endswith("_loss") or short in ("cross_entropy", "nll_loss", "mse_loss",
                                                         "l1_loss", "kl_div", "softmax",
                                                         "log_softmax", "sigmoid")
                ):
                    return "float"
                if q in ("torch.count_nonzero", "torch.argmax", "torch.argmin"):
                    return "int"
                if q in ("torch.sum",) and len(expr.args) == 1:
                    inner_class = self.dtype_class(expr.args[0].value)
                    return "int" if inner_class in ("bool", "int") else inner_class
                if q in ("torch.isnan", "torch.isinf", "torch.isfinite", "torch.eq", "torch.ne",
                         "torch.lt", "torch.gt", "torch.le", "torch.ge", "torch.logical_and",
                         "torch.logical_or", "torch.logical_not"):
                    return "bool"
                if q in ("torch.mean", "torch.exp", "torch.log", "torch.sigmoid"):
                    return "float"
            if self._is_module_call(expr):
                return None
        return None

    # -- computing values --------------------------------------------------------------------

    def _compute(self, expr: cst.CSTNode) -> Value:
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                             cst.ConcatenatedString, cst.FormattedString, cst.Ellipsis)):
            return Value.HOST
        if isinstance(expr, cst.Name):
            return self._name_value(expr)
        if isinstance(expr, cst.Attribute):
            return self._attribute_value(expr)
        if isinstance(expr, cst.Call):
            return self._call_value(expr)
        if isinstance(expr, cst.Subscript):
            return self._subscript_value(expr)
        if isinstance(expr, cst.BinaryOperation):
            return self._binary_value(expr.left, expr.right, expr.operator)
        if isinstance(expr, cst.Comparison):
            return self._comparison_value(expr)
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return Value.HOST
            return self.value(expr.expression)
        if isinstance(expr, cst.BooleanOperation):
            return join([self.value(expr.left), self.value(expr.right)])
        if isinstance(expr, cst.IfExp):
            return join([self.value(expr.body), self.value(expr.orelse)])
        if isinstance(expr, cst.NamedExpr):
            return self.value(expr.value)
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp,
                             cst.DictComp, cst.GeneratorExp)):
            return Value.CONTAINER
        if isinstance(expr, cst.Lambda):
            return Value.HOST
        return Value.UNKNOWN

    def _name_value(self, name: cst.Name) -> Value:
        if name.value in ("True", "False", "None"):
            return Value.HOST
        access = self.md.access(name)
        no_tensor = False  # a failed test of `torch.Tensor` proves it no tensor here
        if access is not None and name.value in self._isinstance_subjects:
            narrowed = self._narrowed(name, access)
            if isinstance(narrowed, Value):
                return narrowed
            no_tensor = narrowed is _NO_TENSOR
        if access is not None:
            referents = list(access.referents)
            if not referents:
                scope = access.scope
                referents = list(scope.assignments[name.value]) if scope is not None else []
        else:
            referents = self._target_assignments(name)
        if not referents:
            return Value.UNKNOWN
        if access is not None and len(referents) > 1:
            referents = self._reaching(name, referents)
        values: list[Value | None] = []
        for referent in referents:
            values.append(self._assignment_value(referent))
        result = join(values)
        if result is Value.UNKNOWN and not no_tensor and not any(
            v in (Value.HOST, Value.ARRAY, Value.MODULE, Value.CONTAINER) for v in values
        ):
            if self._has_tensor_evidence(name.value, referents):
                return Value.TENSOR
        return result

    @functools.cached_property
    def _isinstance_subjects(self) -> frozenset[str]:
        """The names that some ``isinstance(name, ...)`` of the module tests."""
        return frozenset(
            call.args[0].value.value for call in self.md.nodes(cst.Call)
            if isinstance(call.func, cst.Name) and call.func.value == "isinstance"
            and len(call.args) == 2 and isinstance(call.args[0].value, cst.Name))

    def _narrowed(self, use: cst.Name, access: Access) -> Value | object | None:
        """What ``use`` holds where an ``isinstance`` test of it has proved it no tensor:
        in the body of ``if isinstance(x, float):`` (or a test that is such a call
        ``and`` others), or after ``assert isinstance(x, str)`` in the same block;
        HOST for numbers and strings, CONTAINER for lists, tuples and mappings.
        :data:`_NO_TENSOR` where a test of ``torch.Tensor`` has failed (the ``else`` of
        ``if isinstance(x, torch.Tensor):``, the body of ``if not isinstance(...)``):
        something other than a tensor, perhaps holding tensors (a model's tuple of
        outputs). None elsewhere, and wherever the name may be bound again between the
        test and the use (anywhere in the ``if``, between the ``assert`` and the use, or
        in another function: a ``nonlocal`` or ``global`` store). Conditional
        expressions (``x.item() if isinstance(x, torch.Tensor) else float(x)``) narrow
        their two sides as an ``if`` does.

        Without it, evidence found in one branch (``data.cpu()`` under
        ``isinstance(data, torch.Tensor)``) made the name a tensor in the others too.
        """
        # Every binding of the name, not only those LibCST takes to reach the use (it
        # leaves out those after it, which a loop brings back round).
        bindings = set(access.referents)
        if access.scope is not None:
            bindings.update(access.scope.assignments[use.value])
        function = self.md.enclosing(use, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
        if not isinstance(function, cst.FunctionDef) or not all(
            isinstance(b, Assignment) and self.md.enclosing(
                b.node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) is function
            for b in bindings
        ):
            return None  # a name of another scope may change behind the test's back

        def rebound_in(node: cst.CSTNode) -> bool:
            return any(b.node is node or self.md.is_ancestor(node, b.node)  # type: ignore
                       for b in bindings)

        def rebound_before_use(branch: cst.CSTNode) -> bool:
            """Whether the name may be bound again in ``branch`` before ``use``: earlier
            in it, or anywhere in a loop of it that holds the use (a binding of the
            other branch never runs before the use; one in the statement that holds the
            use, ``x = float(x)``, runs after it)."""
            loops = [node for node in self.md.ancestors(use) if node is not branch and (
                self.md.is_ancestor(branch, node) and isinstance(node, _LOOPS))]
            for binding in bindings:
                node = binding.node  # type: ignore[attr-defined]
                if not (node is branch or self.md.is_ancestor(branch, node)):
                    continue
                if any(self.md.is_ancestor(loop, node) for loop in loops):
                    return True
                if self._evaluated_before(node, use):
                    return True
            return False

        child: cst.CSTNode = use
        for parent in self.md.ancestors(use):
            if parent is function:
                return None
            if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
                narrowed = self._isinstance_test(parent.test, use.value,
                                                 holds=child is parent.body)
                if narrowed is not None:
                    return None if rebound_in(parent.test) or rebound_before_use(
                        child) else narrowed
            elif isinstance(parent, cst.IndentedBlock) and isinstance(child, cst.BaseStatement):
                index = parent.body.index(child)
                for earlier in reversed(parent.body[:index]):
                    narrowed = self._asserted(earlier, use.value)
                    if narrowed is not None:
                        between = parent.body[parent.body.index(earlier) + 1:index + 1]
                        if any(rebound_in(statement) for statement in between):
                            return None
                        return narrowed
            child = parent
        return None

    def _evaluated_before(self, binding: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Whether a binding (a target) runs before ``use``, neither in a loop: it comes
        first in the text, but for the targets of the assignment whose value holds the
        use."""
        statement = self.md.small_statement_of(binding)
        if isinstance(statement, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and (
                statement.value is not None and (
                    statement.value is use or self.md.is_ancestor(statement.value, use))):
            return False
        return self.md.source_order(binding) < self.md.source_order(use)

    def _asserted(self, statement: cst.BaseStatement, name: str) -> Value | None:
        """What ``statement``, an ``assert isinstance(name, T)`` line, proves ``name`` is."""
        if not isinstance(statement, cst.SimpleStatementLine):
            return None
        for small in statement.body:
            if isinstance(small, cst.Assert):
                narrowed = self._isinstance_test(small.test, name)
                if narrowed is not None:
                    return narrowed
        return None

    def _isinstance_test(self, test: cst.BaseExpression, name: str,
                         holds: bool = True) -> Value | object | None:
        """What ``test``, true (``holds``) or false, proves ``name`` is, when it proves it
        no tensor (see :meth:`_narrowed`)."""
        if isinstance(test, cst.BooleanOperation) and isinstance(
                test.operator, cst.And if holds else cst.Or):  # each operand is `holds`
            return (self._isinstance_test(test.left, name, holds)
                    or self._isinstance_test(test.right, name, holds))
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self._isinstance_test(test.expression, name, not holds)
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name)
                and test.func.value == "isinstance" and len(test.args) == 2
                and all(a.keyword is None and not a.star for a in test.args)
                and isinstance(test.args[0].value, cst.Name)
                and test.args[0].value.value == name
                and "builtins.isinstance" in self.md.qualified_names(test.func)):
            return None
        types = self._tuple_constant(test.args[1].value)
        if isinstance(types, cst.Tuple):
            if any(isinstance(e, cst.StarredElement) for e in types.elements):
                return None
            elements = [e.value for e in types.elements]
        else:
            elements = [types]
        if not holds:  # none of the types: no tensor if torch.Tensor is one of them
            return _NO_TENSOR if any("torch.Tensor" in self.md.qualified_names(element)
                                     for element in elements) else None
        found: set[str | None] = set()
        for element in elements:
            kinds = {_NARROWING_TYPES.get(q) for q in self.md.qualified_names(element)}
            if len(kinds) != 1 or None in kinds:
                return None
            found |= kinds
        if found == {"host"}:
            return Value.HOST
        if found == {"container"}:
            return Value.CONTAINER
        return None

    def _tuple_constant(self, types: cst.BaseExpression) -> cst.BaseExpression:
        """The tuple a name of types stands for when a plain ``NAME = (int, str)`` is the
        name's only binding (``PRIMITIVE_TYPES``, at module level), else ``types``."""
        value = sole_value(self.md, types) if isinstance(types, cst.Name) else None
        return value if isinstance(value, cst.Tuple) else types

    def _reaching(self, use: cst.Name, referents: list[BaseAssignment]) -> list[BaseAssignment]:
        """The assignments that can reach ``use``: a plain ``x = ...`` statement that
        precedes the use in an enclosing block hides every earlier assignment.

        Only the statements between that assignment and the use (at that block's
        level, nested ones included) can rebind the name in between.

        Linear in the number of assignments: where each statement and each assignment
        sits in its blocks is indexed once (scanning the block back from the use, and
        asking for every assignment whether a statement in between holds it, was
        quadratic in the length of a function that rebinds a name again and again).
        """
        killers: dict[int, tuple[BaseAssignment, int]] = {}
        for referent in referents:
            line = self._killer_line(referent)
            if line is not None:
                killers[line] = (referent, line)
        if not killers:
            return referents
        node: cst.CSTNode = use
        while True:
            statement = self.md.statement_of(node)
            if statement is None:
                return referents
            block = self.md.parent(statement)
            where = self._block_positions(block)  # type: ignore[arg-type]
            index = where[id(statement)]
            earlier, killer = -1, None
            for referent, line in killers.values():
                at = where.get(line, -1)
                if earlier < at < index:
                    earlier, killer = at, referent
            if killer is not None:
                last = index if not isinstance(statement, cst.SimpleStatementLine) else index - 1
                return [killer] + [
                    r for r in referents if r is not killer and isinstance(r, Assignment)
                    and earlier < self._statement_chain(r).get(id(block), -1) <= last
                ]
            holder = self.md.parent(block)
            if holder is None or isinstance(holder, (cst.FunctionDef, cst.ClassDef,
                                                     cst.Module, cst.Lambda)):
                return referents
            node = holder

    def _killer_line(self, referent: BaseAssignment) -> int | None:
        """The id of the statement line of a plain ``x = ...`` (or ``x: T = ...``) that
        makes ``referent``, else None."""
        key = id(referent)
        if key in self._killer_lines:
            return self._killer_lines[key]
        found = None
        if isinstance(referent, Assignment) and isinstance(referent.node, cst.Name):
            parent = self.md.parent(referent.node)
            binder: cst.CSTNode | None = None
            if isinstance(parent, cst.AssignTarget):
                binder = self.md.parent(parent)
            elif isinstance(parent, cst.AnnAssign) and parent.value is not None:
                binder = parent
            if binder is not None:
                line = self.md.parent(binder)
                if isinstance(line, cst.SimpleStatementLine):
                    found = id(line)
        self._killer_lines[key] = found
        return found

    def _block_positions(self, block: cst.Module | cst.IndentedBlock) -> dict[int, int]:
        """The index of each statement of ``block`` in its body, by id."""
        found = self._blocks.get(id(block))
        if found is None:
            found = self._blocks[id(block)] = {id(s): i for i, s in enumerate(block.body)}
        return found

    def _statement_chain(self, referent: Assignment) -> dict[int, int]:
        """For each block that holds the node of ``referent`` (strictly: not a ``def``
        of its own name), the index there of the statement that holds it, by the
        block's id."""
        key = id(referent)
        found = self._chains.get(key)
        if found is None:
            found = self._chains[key] = {}
            current = self.md.parent(referent.node)
            while current is not None:
                statement = self.md.statement_of(current)
                if statement is None:
                    break
                block = self.md.parent(statement)
                found[id(block)] = self._block_positions(block)[id(statement)]  # type: ignore
                current = block
        return found

    def _target_assignments(self, name: cst.Name) -> list[BaseAssignment]:
        scope = self.md.scope(name)
        if scope is None:
            return []
        assignments = list(scope.assignments[name.value])
        own = [a for a in assignments if isinstance(a, Assignment) and a.node is name]
        return own or assignments

    def _has_tensor_evidence(self, name: str, referents: list[BaseAssignment]) -> bool:
        keys = {(id(r.scope), name) for r in referents}
        if keys & self._counter_evidence:
            return False
        return bool(keys & self._evidence)

    def _assignment_value(self, assignment: BaseAssignment) -> Value | None:
        key = id(assignment)
        cached = self._assign_memo.get(key)
        if isinstance(cached, Value):
            return cached
        if cached is _IN_PROGRESS:
            return None
        self._assign_memo[key] = _IN_PROGRESS
        try:
            result = self._compute_assignment(assignment)
        finally:
            self._assign_memo.pop(key, None)
        if result is not None:
            self._assign_memo[key] = result
        return result

    def _compute_assignment(self, assignment: BaseAssignment) -> Value | None:
        if isinstance(assignment, BuiltinAssignment):
            return Value.HOST
        if isinstance(assignment, ImportAssignment):
            return Value.HOST
        if not isinstance(assignment, Assignment):
            return Value.UNKNOWN
        node = assignment.node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return Value.HOST
        if isinstance(node, cst.Param):
            return self._param_value(node)
        if isinstance(node, cst.Name):
            return self._bound_value(node)
        return Value.UNKNOWN

    def _bound_value(self, target: cst.Name) -> Value | None:
        """The value bound to a target name by its assignment statement, loop or with."""
        path: list[int] = []
        child: cst.CSTNode = target
        parent = self.md.parent(child)
        while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            if isinstance(parent, cst.StarredElement):
                return Value.CONTAINER
            if isinstance(parent, (cst.Tuple, cst.List)):
                index = next(i for i, e in enumerate(parent.elements) if e is child)
                if any(isinstance(e, cst.StarredElement) for e in parent.elements):
                    return Value.UNKNOWN
                path.insert(0, index)
            child, parent = parent, self.md.parent(parent)
        if isinstance(parent, cst.AssignTarget):
            assign = self.md.parent(parent)
            if isinstance(assign, cst.Assign):
                return self._element(assign.value, path)
        elif isinstance(parent, cst.AnnAssign):
            if parent.value is not None:
                return self._element(parent.value, path)
            return self._annotation_value(parent.annotation.annotation)
        elif isinstance(parent, cst.AugAssign):
            value = self.value(parent.value)
            if value in (Value.HOST, Value.CONTAINER):
                return None  # `acc += 1.0` keeps whatever acc was
            return value
        elif isinstance(parent, cst.For) and child is parent.target:
            return self._iteration_element(parent.iter, path)
        elif isinstance(parent, cst.CompFor) and child is parent.target:
            return self._iteration_element(parent.iter, path)
        elif isinstance(parent, cst.NamedExpr):
            return self.value(parent.value)
        elif isinstance(parent, cst.AsName):
            holder = self.md.parent(parent)
            if isinstance(holder, cst.ExceptHandler):
                return Value.HOST
        return Value.UNKNOWN

    def _element(self, value: cst.BaseExpression, path: list[int]) -> Value:
        """The value at ``path`` inside ``value`` when it is unpacked."""
        for index in path:
            if isinstance(value, (cst.Tuple, cst.List)):
                elements = value.elements
                if index < len(elements) and not any(
                    isinstance(e, cst.StarredElement) for e in elements
                ):
                    value = elements[index].value
                    continue
                return Value.UNKNOWN
            outer = self.value(value)
            if outer in (Value.TENSOR, Value.ARRAY, Value.HOST, Value.MODULE):
                return outer  # unpacking a tensor gives tensors; torch.max(...) tuples too
            return Value.UNKNOWN
        return self.value(value)

    def _iteration_element(self, iterable: cst.BaseExpression, path: list[int]) -> Value:
        """The value a loop target at ``path`` takes when iterating ``iterable``."""
        if isinstance(iterable, cst.Call):
            qnames = self.md.qualified_names(iterable.func)
            args = positional_args(iterable)
            if "builtins.range" in qnames:
                return Value.HOST
            if "builtins.enumerate" in qnames and args:
                if not path:
                    return Value.CONTAINER
                if path[0] == 0:
                    return Value.HOST
                return self._iteration_element(args[0], path[1:])
            if "builtins.zip" in qnames:
                if not path:
                    return Value.CONTAINER
                if path[0] < len(args):
                    return self._iteration_element(args[path[0]], path[1:])
                return Value.UNKNOWN
            if "builtins.reversed" in qnames or "builtins.sorted" in qnames or (
                "builtins.list" in qnames
            ):
                return self._iteration_element(args[0], path) if args else Value.UNKNOWN
            if isinstance(iterable.func, cst.Attribute):
                method = iterable.func.attr.value
                receiver = self.value(iterable.func.value)
                if receiver is Value.MODULE:
                    if method in ("parameters", "buffers"):
                        return Value.TENSOR if not path else Value.TENSOR
                    if method in ("named_parameters", "named_buffers"):
                        if not path:
                            return Value.CONTAINER
                        return Value.HOST if path[0] == 0 else Value.TENSOR
                    if method in ("children", "modules"):
                        return Value.MODULE
                    if method in ("named_children", "named_modules"):
                        if not path:
                            return Value.CONTAINER
                        return Value.HOST if path[0] == 0 else Value.MODULE
                if receiver is Value.TENSOR and method in ("tolist",):
                    return Value.HOST
                if receiver is Value.TENSOR and method in ("items", "keys"):
                    # No tensor has these: a model's output taken for one is a mapping
                    # (a dict, a ModelOutput) of tensors, whose keys are its names.
                    if method == "keys" or path[:1] == [0]:
                        return Value.UNKNOWN
                    return Value.CONTAINER if not path else Value.TENSOR
                if receiver in (Value.HOST, Value.ARRAY) and method in ("items", "keys", "values"):
                    return Value.HOST if receiver is Value.HOST else Value.ARRAY
        outer = self.value(iterable)
        if outer in (Value.TENSOR, Value.ARRAY, Value.MODULE):
            return outer
        annotated = self._annotated_element(iterable)
        if annotated is not None and not path:
            return annotated
        if outer is Value.HOST:
            return Value.HOST  # iterating a string, a shape, a host number list...
        if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
            element = join(self._element(e.value, path) for e in iterable.elements
                           if not isinstance(e, cst.StarredElement))
            return element
        return Value.UNKNOWN

    def _annotated_element(self, iterable: cst.BaseExpression) -> Value | None:
        """The element value of a parameter annotated ``list[Tensor]`` and the like."""
        if not isinstance(iterable, cst.Name):
            return None
        access = self.md.access(iterable)
        if access is None:
            return None
        referents = list(access.referents)
        if len(referents) != 1 or not isinstance(referents[0], Assignment):
            return None
        param = referents[0].node
        if not isinstance(param, cst.Param) or param.annotation is None:
            return None
        annotation = param.annotation.annotation
        if not isinstance(annotation, cst.Subscript):
            return None
        qnames = self.md.qualified_names(annotation.value)
        if not qnames & {"builtins.list", "typing.List", "typing.Sequence", "typing.Iterable",
                         "collections.abc.Sequence", "collections.abc.Iterable",
                         "typing.Iterator", "collections.abc.Iterator", "builtins.set",
                         "builtins.tuple", "typing.Tuple"}:
            return None
        first = annotation.slice[0].slice
        if not isinstance(first, cst.Index):
            return None
        if qnames & {"builtins.tuple", "typing.Tuple"} and not (
            len(annotation.slice) == 2 and isinstance(annotation.slice[1].slice, cst.Index)
            and isinstance(annotation.slice[1].slice.value, cst.Ellipsis)
        ):
            return None
        return self._annotation_value(first.value)

    def _param_value(self, param: cst.Param) -> Value:
        if param.annotation is not None:
            return self._annotation_value(param.annotation.annotation)
        func = self.md.parent(self.md.parent(param))  # Param -> Parameters -> FunctionDef
        if isinstance(func, cst.FunctionDef):
            params = func.params.params
            cls = self.md.parent(self.md.parent(func))  # FunctionDef -> IndentedBlock -> ClassDef
            is_method = isinstance(cls, cst.ClassDef) and not any(
                isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
                for d in func.decorators
            )
            if is_method and params and params[0] is param:
                return Value.MODULE if self.is_module_class(cls) else Value.UNKNOWN
        return Value.UNKNOWN

    def _annotation_value(self, annotation: cst.BaseExpression) -> Value:
        if isinstance(annotation, cst.SimpleString):
            return Value.UNKNOWN
        if isinstance(annotation, cst.BinaryOperation) and isinstance(
            annotation.operator, cst.BitOr
        ):  # Tensor | None
            parts = [self._annotation_value(annotation.left),
                     self._annotation_value(annotation.right)]
            parts = [p for p in parts if p is not None]
            return join(parts)
        if isinstance(annotation, cst.Name) and annotation.value == "None":
            return None  # type: ignore[return-value]
        if isinstance(annotation, cst.Subscript):
            qnames = self.md.qualified_names(annotation.value)
            if qnames & {"typing.Optional"}:
                element = annotation.slice[0].slice
                if isinstance(element, cst.Index):
                    return self._annotation_value(element.value)
            return Value.CONTAINER if qnames & {
                "typing.List", "typing.Tuple", "typing.Dict", "builtins.list", "builtins.tuple",
                "builtins.dict", "typing.Sequence", "typing.Iterable",
            } else Value.UNKNOWN
        qnames = self.md.qualified_names(annotation)
        if qnames & T.TENSOR_ANNOTATIONS:
            return Value.TENSOR
        if qnames & _HOST_ANNOTATIONS:
            return Value.HOST
        if any(q.split(".")[0] in T.ARRAY_LIBRARIES for q in qnames):
            return Value.ARRAY
        if qnames & T.MODULE_BASES:
            return Value.MODULE
        return Value.UNKNOWN

    def _attribute_value(self, node: cst.Attribute) -> Value:
        qnames = self.md.qualified_names(node)
        for q in qnames:
            root = q.split(".")[0]
            if root == "torch":
                return Value.HOST  # torch.float32, torch.pi, torch.Tensor, torch.cuda ...
            if root in T.ARRAY_LIBRARIES:
                return Value.ARRAY
            if root in T.HOST_MODULES:
                return Value.HOST
        attr = node.attr.value
        base = node.value
        if attr == "__class__":
            return Value.HOST  # a class (`self.__class__.__name__` is text)
        self_class = self._self_class(base)
        if self_class is not None:
            return self._self_attribute_value(self_class, attr)
        base_value = self.value(base)
        if base_value is Value.TENSOR:
            if attr in T.TENSOR_HOST_ATTRIBUTES:
                return Value.HOST
            if attr in T.TENSOR_TENSOR_ATTRIBUTES:
                return Value.TENSOR
            return Value.UNKNOWN
        if base_value is Value.MODULE:
            if attr in ("weight", "bias"):
                return Value.TENSOR
            if attr in ("module", "_orig_mod"):
                return Value.MODULE
            if attr == "training":
                return Value.HOST
            return Value.UNKNOWN
        if base_value is Value.ARRAY:
            return Value.ARRAY
        if base_value is Value.HOST:
            return Value.HOST
        if self._is_config(base):
            return Value.HOST
        return Value.UNKNOWN

    def _is_config(self, node: cst.BaseExpression) -> bool:
        """``args``, ``cfg.train``, ``self.hparams``: conventional names of configuration."""
        root, named = self._config_chain(node)
        if named:
            return True
        return isinstance(root, cst.Name) and root.value in T.CONFIG_NAMES and self.value(
            root) in (Value.UNKNOWN, Value.HOST)

    def _config_chain(self, node: cst.BaseExpression) -> tuple[cst.BaseExpression, bool]:
        """The first value of an attribute chain, and whether an attribute of the chain is
        a configuration name. Kept for each attribute: its value is asked of every
        attribute of a chain, each of which would walk the chain below it again (a chain
        thousands deep)."""
        if not isinstance(node, cst.Attribute):
            return node, False
        known = self._config.get(id(node))
        if known is None:
            root, named = self._config_chain(node.value)
            known = self._config[id(node)] = (root, named or node.attr.value in T.CONFIG_NAMES)
        return known

    def self_attribute_values(self, node: cst.BaseExpression) -> list[cst.CSTNode] | None:
        """What is assigned to ``self.<attr>`` in the class of ``node`` (a ``self.<attr>``
        expression in a method); None when ``node`` is not such an expression.

        Assignments through unpacking give a placeholder name ``_``; annotations
        without a value give the annotation.
        """
        if not isinstance(node, cst.Attribute):
            return None
        cls = self._self_class(node.value)
        if cls is None:
            return None
        return [value for _, value in self._class_attributes(cls).get(node.attr.value, [])]

    def _self_class(self, base: cst.BaseExpression) -> cst.ClassDef | None:
        """The class when ``base`` is the ``self`` parameter of one of its methods."""
        if not isinstance(base, cst.Name):
            return None
        access = self.md.access(base)
        if access is None:
            return None
        referents = list(access.referents)
        if len(referents) != 1 or not isinstance(referents[0], Assignment):
            return None
        param = referents[0].node
        if not isinstance(param, cst.Param):
            return None
        func = self.md.parent(self.md.parent(param))
        if not isinstance(func, cst.FunctionDef) or not func.params.params:
            return None
        if func.params.params[0] is not param:
            return None
        cls = self.md.parent(self.md.parent(func))
        if not isinstance(cls, cst.ClassDef):
            return None
        if any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
               for d in func.decorators):
            return None
        return cls

    def _self_attribute_value(self, cls: cst.ClassDef, attr: str) -> Value:
        assigned = self._class_attributes(cls).get(attr)
        if not assigned:
            if attr in ("training",):
                return Value.HOST
            if attr in T.CONFIG_NAMES:
                return Value.HOST
            return Value.UNKNOWN
        values: list[Value | None] = []
        for how, node in assigned:
            if how == "tensor":
                values.append(Value.TENSOR)
            elif how == "annotation":
                values.append(self._annotation_value(node))  # type: ignore[arg-type]
            elif how == "aug":
                value = self.value(node)
                values.append(None if value in (Value.HOST, Value.CONTAINER) else value)
            else:
                values.append(self.value(node))
        result = join(values)
        if result is Value.UNKNOWN and attr in T.CONFIG_NAMES:
            return Value.HOST
        return result

    def _class_attributes(self, cls: cst.ClassDef) -> dict[str, list[tuple[str, cst.CSTNode]]]:
        """Everything assigned to ``self.<attr>`` in the methods of ``cls`` (and its body)."""
        cached = self._class_attrs.get(id(cls))
        if cached is not None:
            return cached
        found: dict[str, list[tuple[str, cst.CSTNode]]] = {}
        collector = _SelfAttributeCollector(found)
        for statement in cls.body.body:
            if isinstance(statement, cst.FunctionDef):
                params = statement.params.params
                if params:
                    collector.self_name = params[0].name.value
                    visit(statement.body, collector)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            if isinstance(target.target, cst.Name):
                                found.setdefault(target.target.value, []).append(
                                    ("value", small.value))
                    elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        if small.value is not None:
                            found.setdefault(small.target.value, []).append(("value", small.value))
                        else:
                            found.setdefault(small.target.value, []).append(
                                ("annotation", small.annotation.annotation))
        self._class_attrs[id(cls)] = found
        return found

    def is_module_class(self, cls: cst.ClassDef) -> bool:
        """Whether a class of this module subclasses nn.Module, directly or via local classes."""
        cached = self._module_classes.get(id(cls))
        if cached is not None:
            return cached
        self._module_classes[id(cls)] = False  # cycle guard
        result = False
        for base in cls.bases:
            qnames = self.md.qualified_names(base.value)
            if qnames & T.MODULE_BASES or any(
                q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in T.NN_MODULE_CLASSES
                for q in qnames
            ):
                result = True
                break
            local = self._local_class(base.value)
            if local is not None and self.is_module_class(local):
                result = True
                break
        self._module_classes[id(cls)] = result
        return result

    def is_dataset_class(self, cls: cst.ClassDef) -> bool:
        for current in self._lineage(cls):
            if current.name.value.endswith(("Dataset", "Sampler")):
                return True
            for base in current.bases:
                if self.md.qualified_names(base.value) & T.DATASET_BASES or (
                        dotted_name(base.value) or "").endswith(("Dataset", "Sampler")):
                    return True
        return False

    def is_collator_class(self, cls: cst.ClassDef) -> bool:
        """Whether a class is a collator (:data:`T.COLLATOR` in its name, a base's or that of
        a local class it derives from) that is not a model: no ``forward`` method, not an
        ``nn.Module``. Asked for every method at every hot-path question: kept per class."""
        cached = self._collator_classes.get(id(cls))
        if cached is None:
            cached = self._collator_classes[id(cls)] = self._is_collator_class(cls)
        return cached

    def _is_collator_class(self, cls: cst.ClassDef) -> bool:
        if self.is_module_class(cls) or any(
                isinstance(s, cst.FunctionDef) and s.name.value == "forward"
                for s in cls.body.body):
            return False
        for current in self._lineage(cls):
            if T.COLLATOR in current.name.value:
                return True
            for base in current.bases:
                if T.COLLATOR in (dotted_name(base.value) or "").rpartition(".")[2]:
                    return True
        return False

    def _lineage(self, cls: cst.ClassDef) -> Iterator[cst.ClassDef]:
        """``cls`` and the classes of this module it derives from, each once (a name bound
        to several classes may make the chain loop)."""
        seen: set[int] = set()
        todo = [cls]
        while todo:
            current = todo.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            yield current
            for base in current.bases:
                local = self._local_class(base.value)
                if local is not None:
                    todo.append(local)

    def local_class(self, expr: cst.BaseExpression) -> cst.ClassDef | None:
        """The class of this module that the name ``expr`` refers to, if any."""
        return self._local_class(expr)

    def _local_class(self, expr: cst.BaseExpression) -> cst.ClassDef | None:
        definition = self._local_definition(expr)
        return definition if isinstance(definition, cst.ClassDef) else None

    def _local_definition(self, expr: cst.BaseExpression) -> cst.CSTNode | None:
        if not isinstance(expr, cst.Name):
            return None
        access = self.md.access(expr)
        if access is None:
            return None
        referents = list(access.referents)
        if len(referents) != 1 or not isinstance(referents[0], Assignment):
            return None
        node = referents[0].node
        return node if isinstance(node, (cst.ClassDef, cst.FunctionDef)) else None

    def _call_value(self, call: cst.Call) -> Value:
        qnames = self.md.qualified_names(call.func)
        for q in sorted(qnames):
            value = self._qualified_call_value(q, call)
            if value is not None:
                return value
        if self.value(call.func) is Value.MODULE:
            return Value.TENSOR  # calling a module runs its forward
        if isinstance(call.func, cst.Attribute):
            method_value = self._method_value(call.func.value, call.func.attr.value, call)
            if method_value is not None:
                return method_value
        definition = self._local_definition(call.func) if isinstance(call.func, cst.Name) else None
        if isinstance(definition, cst.ClassDef):
            if self.is_module_class(definition):
                return Value.MODULE
            if self.is_dataset_class(definition):
                return Value.HOST
            return Value.UNKNOWN
        if isinstance(definition, cst.FunctionDef):
            return self._function_return_value(definition)
        return Value.UNKNOWN

    def _is_module_call(self, call: cst.Call) -> bool:
        return self.value(call.func) is Value.MODULE

    def _function_return_value(self, func: cst.FunctionDef) -> Value:
        key = id(func)
        cached = self._memo.get(key)
        if isinstance(cached, Value):
            return cached
        if cached is _IN_PROGRESS:
            return Value.UNKNOWN
        self._memo[key] = _IN_PROGRESS
        returns: list[cst.Return] = []
        yields: list[cst.Yield] = []
        visit(func.body, _ReturnCollector(returns, yields))
        if yields:
            result = Value.UNKNOWN
        elif not returns:
            result = Value.HOST  # None
        else:
            result = join(self.value(r.value) if r.value is not None else Value.HOST
                          for r in returns)
        self._memo[key] = result
        return result

    def _qualified_call_value(self, q: str, call: cst.Call) -> Value | None:
        root, _, rest = q.partition(".")
        args = positional_args(call)
        if root == "builtins":
            if rest in T.HOST_BUILTINS:
                return Value.HOST
            if rest in T.CONTAINER_BUILTINS:
                return Value.CONTAINER
            if rest in T.TENSOR_PRESERVING_BUILTINS:
                values = [self.value(a) for a in args]
                if Value.TENSOR in values:
                    return Value.TENSOR
                if values and all(v is Value.HOST for v in values):
                    return Value.HOST
                return Value.UNKNOWN
            if rest == "sum":
                values = [self.value(a) for a in args]
                return Value.HOST if values and all(v is Value.HOST for v in values) else (
                    Value.UNKNOWN)
            return None
        if root == "torch":
            if q in T.TORCH_TENSOR_CLASSES:
                return Value.TENSOR
            if q in T.MODULE_WRAPPERS:
                inner = self.value(args[0]) if args else Value.UNKNOWN
                return Value.MODULE if inner is Value.MODULE or q != "torch.compile" else (
                    Value.HOST if inner is Value.HOST else Value.UNKNOWN)
            if q in T.TORCH_NAMESPACE_HOST_FUNCTIONS:
                return Value.HOST
            if q.startswith(T.TORCH_TENSOR_NAMESPACES):
                return Value.TENSOR
            if q.startswith("torch.nn."):
                last = q.rsplit(".", 1)[-1]
                if last in T.NN_MODULE_CLASSES:
                    return Value.MODULE
                return Value.UNKNOWN
            if rest in T.TORCH_TENSOR_FUNCTIONS:
                return Value.TENSOR
            if rest in T.TORCH_HOST_FUNCTIONS:
                return Value.HOST
            if q.startswith(_TORCH_HOST_NAMESPACES) or rest in ("device", "dtype", "Size",
                                                                 "Generator", "no_grad",
                                                                 "enable_grad", "inference_mode",
                                                                 "autocast", "set_grad_enabled"):
                return Value.HOST
            return Value.UNKNOWN
        if root in T.ARRAY_LIBRARIES:
            return Value.ARRAY
        if root in T.HOST_MODULES:
            return Value.HOST
        return None

    def _method_value(self, receiver: cst.BaseExpression, method: str,
                      call: cst.Call) -> Value | None:
        if method in ("item", "tolist"):
            return Value.HOST
        if method in T.METADATA_METHODS:
            return Value.HOST
        if method in ("parse_args", "parse_known_args"):
            return Value.HOST
        if method in ("numpy", "to_numpy") and not call.args:
            return Value.ARRAY  # a tensor's, a pandas or pyarrow column's: a numpy array
        receiver_value = self.value(receiver)
        if receiver_value is Value.TENSOR:
            if method == "type":
                return Value.HOST if not call.args else Value.TENSOR
            if method in T.TENSOR_HOST_METHODS:
                return Value.HOST
            return Value.TENSOR
        if receiver_value is Value.MODULE:
            if method in T.MODULE_RETURNING_SELF:
                return Value.MODULE
            if method in ("forward", "__call__"):
                return Value.TENSOR
            if method in ("parameters", "named_parameters", "buffers", "named_buffers",
                          "children", "modules", "named_modules", "state_dict"):
                return Value.CONTAINER
            return Value.UNKNOWN
        if receiver_value is Value.ARRAY:
            return Value.ARRAY
        if receiver_value is Value.HOST:
            return Value.HOST
        if receiver_value is Value.CONTAINER:
            if method in ("copy",):
                return Value.CONTAINER
            if method in ("index", "count", "__len__", "keys", "values", "items"):
                return Value.HOST if method in ("index", "count", "__len__") else (
                    Value.CONTAINER)
            return Value.UNKNOWN
        if method == "detach":
            return Value.TENSOR
        if self._is_config(receiver):
            return Value.HOST
        return None

    def _subscript_value(self, node: cst.Subscript) -> Value:
        base = self.value(node.value)
        if base is Value.TENSOR:
            for element in node.slice:
                if isinstance(element.slice, cst.Index) and isinstance(
                    element.slice.value, (cst.SimpleString, cst.ConcatenatedString,
                                          cst.FormattedString)
                ):
                    return Value.UNKNOWN  # a dict-like model output, not a tensor
            return Value.TENSOR
        if base in (Value.ARRAY, Value.HOST, Value.MODULE):
            return base
        if base is Value.CONTAINER:
            literal = node.value
            if isinstance(literal, (cst.List, cst.Tuple)):
                return join(self.value(e.value) for e in literal.elements)
            return Value.UNKNOWN
        if self._is_config(node.value):
            return Value.HOST
        return Value.UNKNOWN

    def _binary_value(self, left: cst.BaseExpression, right: cst.BaseExpression,
                      operator: cst.BaseBinaryOp) -> Value:
        lv, rv = self.value(left), self.value(right)
        if Value.TENSOR in (lv, rv):
            return Value.TENSOR
        if isinstance(operator, cst.Modulo) and isinstance(
            left, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
        ):
            return Value.HOST
        if {lv, rv} <= {Value.HOST, Value.ARRAY}:
            return Value.ARRAY if Value.ARRAY in (lv, rv) else Value.HOST
        if lv is Value.CONTAINER and rv in (Value.CONTAINER, Value.HOST):
            return Value.CONTAINER
        return Value.UNKNOWN

    def _comparison_value(self, node: cst.Comparison) -> Value:
        if any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn))
               for c in node.comparisons):
            return Value.HOST
        if compares_with_text(node):
            return Value.HOST
        values = [self.value(node.left)] + [self.value(c.comparator) for c in node.comparisons]
        if Value.TENSOR in values:
            return Value.TENSOR
        if all(v in (Value.HOST, Value.ARRAY, Value.CONTAINER) for v in values):
            return Value.ARRAY if Value.ARRAY in values else Value.HOST
        return Value.UNKNOWN

    # -- provenance --------------------------------------------------------------------------

    def _from_foreign_call(self, expr: cst.CSTNode, seen: set[int]) -> bool:
        """Whether a call into a library other than torch may have produced ``expr``."""
        if id(expr) in seen:
            return False
        seen.add(id(expr))
        if self.value(expr) is Value.ARRAY:  # `column.to_numpy()`, `t.numpy()`
            return True
        if isinstance(expr, cst.Call):
            qnames = self.md.qualified_names(expr.func)
            for q in qnames:
                root = q.split(".")[0]
                if root not in T.TORCH_LIBRARIES and root != "builtins" and not q.startswith(
                    "<locals>"
                ) and "." in q:
                    # Imported from another library, or a name we cannot resolve.
                    return not self._is_local_qualified(q)
            if isinstance(expr.func, cst.Attribute):
                return self._from_foreign_call(expr.func.value, seen)
            return False
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            return self._from_foreign_call(expr.value, seen)
        if isinstance(expr, cst.Name):
            access = self.md.access(expr)
            if access is None:
                return False
            for referent in access.referents:
                if isinstance(referent, ImportAssignment):
                    # A module or object imported from torch is torch's, not foreign.
                    return not any(q.name.split(".")[0] in T.TORCH_LIBRARIES
                                   for q in referent.get_qualified_names_for(expr.value))
                if isinstance(referent, Assignment) and isinstance(referent.node, cst.Name):
                    bound = self._binding_value_node(referent.node)
                    if bound is not None and self._from_foreign_call(bound, seen):
                        return True
            return False
        if isinstance(expr, cst.BinaryOperation):
            return self._from_foreign_call(expr.left, seen) or self._from_foreign_call(
                expr.right, seen)
        if isinstance(expr, cst.Comparison):  # (labels == k).nonzero() of a numpy array
            return self._from_foreign_call(expr.left, seen) or any(
                self._from_foreign_call(c.comparator, seen) for c in expr.comparisons)
        if isinstance(expr, cst.UnaryOperation):
            return self._from_foreign_call(expr.expression, seen)
        return False

    def _is_local_qualified(self, q: str) -> bool:
        top = q.split(".")[0]
        scope = self.md.scope(self.md.module)
        if scope is None:
            return False
        return any(not isinstance(a, ImportAssignment) for a in scope.assignments[top])

    def _binding_value_node(self, target: cst.Name) -> cst.BaseExpression | None:
        parent = self.md.parent(target)
        if isinstance(parent, cst.AssignTarget):
            assign = self.md.parent(parent)
            if isinstance(assign, cst.Assign):
                return assign.value
        if isinstance(parent, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr)):
            return parent.value
        if isinstance(parent, (cst.For, cst.CompFor)):
            return parent.iter
        return None

    # -- scans done once per module ----------------------------------------------------------

    def _scan_imports(self) -> set[str]:
        """The top-level packages the module imports. ``torch`` imported only for
        TensorBoard's writer, beside another framework's arrays (cleanrl's JAX scripts:
        ``from torch.utils.tensorboard import SummaryWriter``), does not make it a torch
        module: its values of unknown kind are that framework's."""
        roots: set[str] = set()
        torch_for_logging = torch_otherwise = False
        for statement in (*self.md.nodes(cst.Import), *self.md.nodes(cst.ImportFrom)):
            if isinstance(statement, cst.Import):
                for alias in statement.names:
                    name = dotted_name(alias.name)
                    if name:
                        roots.add(name.split(".")[0])
                        logging = alias.asname is not None and _is_logging_module(name)
                        torch_for_logging |= logging
                        torch_otherwise |= name.split(".")[0] == "torch" and not logging
            elif isinstance(statement, cst.ImportFrom) and statement.module is not None and (
                not statement.relative
            ):
                name = dotted_name(statement.module)
                if name:
                    roots.add(name.split(".")[0])
                    logging = _is_logging_module(name)
                    torch_for_logging |= logging
                    torch_otherwise |= name.split(".")[0] == "torch" and not logging
        if torch_for_logging and not torch_otherwise and roots & T.OTHER_FRAMEWORKS:
            roots.discard("torch")
        return roots

    def _scan_evidence(self) -> tuple[set[tuple[int, str]], set[tuple[int, str]]]:
        evidence: set[tuple[int, str]] = set()
        counter: set[tuple[int, str]] = set()
        for call in self.md.nodes(cst.Call):
            func = call.func
            for argument in self._tensor_arguments(call):
                evidence.update(self._name_keys(argument))
            if isinstance(func, cst.Name):
                counter.update(self._name_keys(func))
                continue
            if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
                continue
            method = func.attr.value
            keys = self._name_keys(func.value)
            if method in T.STRONG_TENSOR_EVIDENCE:
                evidence.update(keys)
            elif method in T.WEAK_TENSOR_EVIDENCE:
                parent = self.md.parent(call)
                if not isinstance(parent, cst.Expr):
                    evidence.update(keys)
                else:
                    counter.update(keys)  # `model.to(device)` alone: modules move in place
            elif method in T.MODULE_ONLY_METHODS:
                counter.update(keys)
        return evidence, counter

    def _tensor_arguments(self, call: cst.Call) -> list[cst.Name]:
        """Names passed where only a tensor is accepted: ``F.relu(x)``, ``torch.isnan(x)``,
        and the loss handed to a backward pass (:meth:`_backward_argument`)."""
        backward = self._backward_argument(call)
        if backward is not None:
            return [backward]
        names = [a for a in positional_args(call) if isinstance(a, cst.Name)]
        if not names:
            return []
        for q in self.md.qualified_names(call.func):
            if q.startswith("torch.nn.functional."):
                # Losses and layers take two tensors; the rest take sizes, dims or
                # factors after the input (F.softmax(x, dim), F.interpolate(x, size)).
                two = q.endswith("loss") or q.rsplit(".", 1)[-1] in T.FUNCTIONAL_TWO_TENSORS
                return names[:2] if two else names[:1]
            if q.startswith("torch.") and q[len("torch."):] in T.TENSOR_ONLY_FUNCTIONS:
                return names[:2] if q.endswith(("equal", "allclose", "matmul", "mm", "bmm")) \
                    else names[:1]
        return []

    def _backward_argument(self, call: cst.Call) -> cst.Name | None:
        """The loss of ``accelerator.backward(loss)`` (Accelerate, Fabric, DeepSpeed's engine
        and ``loss.backward(gradient)`` alike: each calls ``Tensor.backward``) or of
        ``scaler.scale(loss).backward()`` (a scaled iterable has no ``backward``).
        ``torch.autograd.backward`` is left out: it also takes a sequence of tensors."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in T.BACKWARD_METHODS:
            return None
        if not call.args and isinstance(func.value, cst.Call):
            scale = func.value
            if isinstance(scale.func, cst.Attribute) and scale.func.attr.value == "scale" and (
                len(scale.args) == 1 and scale.args[0].keyword is None and not scale.args[0].star
                and isinstance(scale.args[0].value, cst.Name)
            ):
                return scale.args[0].value
            return None
        arguments = positional_args(call)
        if len(arguments) != 1 or not isinstance(arguments[0], cst.Name) or any(
            q.startswith("torch.autograd.") for q in self.md.qualified_names(func)
        ):
            return None
        return arguments[0]

    def _name_keys(self, name: cst.Name) -> set[tuple[int, str]]:
        access = self.md.access(name)
        if access is None:
            return set()
        referents = list(access.referents)
        if not referents:
            return {(id(access.scope), name.value)}
        return {(id(r.scope), name.value) for r in referents}


class _SelfAttributeCollector(cst.CSTVisitor):
    def __init__(self, found: dict[str, list[tuple[str, cst.CSTNode]]]) -> None:
        self.found = found
        self.self_name = "self"

    def _is_self_attr(self, node: cst.BaseExpression) -> str | None:
        if (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                and node.value.value == self.self_name):
            return node.attr.value
        return None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # nested functions have their own `self`, if any

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            attr = self._is_self_attr(target.target)
            if attr:
                self.found.setdefault(attr, []).append(("value", node.value))
            elif isinstance(target.target, (cst.Tuple, cst.List)):
                for element in target.target.elements:
                    if self._is_self_attr(element.value):
                        self.found.setdefault(self._is_self_attr(element.value), []).append(
                            ("unknown", cst.Name("_")))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        attr = self._is_self_attr(node.target)
        if attr:
            if node.value is not None:
                self.found.setdefault(attr, []).append(("value", node.value))
            else:
                self.found.setdefault(attr, []).append(("annotation", node.annotation.annotation))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        attr = self._is_self_attr(node.target)
        if attr:
            self.found.setdefault(attr, []).append(("aug", node.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value == self.self_name
                and func.attr.value in ("register_buffer", "register_parameter")
                and node.args and isinstance(node.args[0].value, cst.SimpleString)):
            name = node.args[0].value.evaluated_value
            if isinstance(name, str):
                self.found.setdefault(name, []).append(("tensor", node))


class _ReturnCollector(cst.CSTVisitor):
    def __init__(self, returns: list[cst.Return], yields: list[cst.Yield]) -> None:
        self.returns = returns
        self.yields = yields

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Return(self, node: cst.Return) -> None:
        self.returns.append(node)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.yields.append(node)


def _is_logging_module(name: str) -> bool:
    """``torch.utils.tensorboard`` or a module inside it: a writer, no tensors."""
    return name == "torch.utils.tensorboard" or name.startswith("torch.utils.tensorboard.")
