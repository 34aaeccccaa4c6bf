"""Could this expression be a tensor? A cheap over-approximation, on Python's ``ast``.

The pre-filter (:mod:`nosync_fix.prefilter`) asks this before LibCST parses a
file: a condition, an index, a printed value or a stored value that cannot be a
tensor gives no rule anything to act on. The answer must never be "no" where the
analysis (:mod:`nosync_fix.analysis.tensors`) could answer ``Kind.TENSOR``; it
may say "maybe" far more often. ``tests/test_maybe_tensors.py`` checks that on
every expression of every corpus.

How it over-approximates the analysis:

* A name is resolved to the scope that binds it, as Python does (functions,
  lambdas, comprehensions, class bodies; ``global`` and ``nonlocal`` names are
  taken file-wide, by spelling), and may hold a tensor when any binding of it in
  that scope may: the analysis looks at the bindings that reach the use.
  Inside a comprehension the enclosing scopes count too.
* A name the analysis knows nothing about becomes a tensor there on evidence of
  use (``x.backward()``, ``x.to(device)``, ``F.relu(x)``): here any such use of
  the name counts, counter-evidence is ignored.
* ``self.<attr>`` may be a tensor when anything assigned to an attribute of that
  spelling, on any object, may be one, or it is registered as a buffer or
  parameter.
* Some rules presume the parameters of ``forward`` and of compiled functions to be
  tensors (``is_model_argument``): :meth:`MaybeTensors.model_argument` says which
  names may be such a parameter (any parameter of a function so named, or so
  decorated).
* A value the analysis joins (``a or b``, ``x if c else y``) is a tensor only
  when every part is: the same here, part by part.

Facts about names, attributes and functions are computed on demand and depend on
one another (``x = y + 1``, ``y = x``): an answer reached while assuming "no" for
something still being computed is remembered only when it is "maybe" or when the
assumption turned out not to matter. Past a budget of steps the answer is
"maybe" for everything, which is always sound.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterator

from . import syntax
from .analysis import _tables as T

_TENSOR_TYPE_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in T.TENSOR_ANNOTATIONS)
_MODULE_TYPE_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in T.MODULE_BASES)
_EVIDENCE_METHODS = T.STRONG_TENSOR_EVIDENCE | T.WEAK_TENSOR_EVIDENCE
_PARAMETER_METHODS = frozenset({"parameters", "buffers", "named_parameters", "named_buffers"})
_SUBMODULE_METHODS = frozenset({"children", "modules", "named_children", "named_modules"})
_PASS_THROUGH_ITERATORS = frozenset({"enumerate", "zip", "reversed", "sorted", "list"})
_LITERALS = (ast.List, ast.Tuple, ast.Set)
#: The kinds of spelling in MaybeTensors._array_names.
_NAME, _ATTRIBUTE, _FUNCTION = 0, 1, 2
#: Values that are never arrays: a name bound only to these holds none.
_NOT_ARRAYS = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp,
               ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)
#: Generic types the analysis reads as containers, whatever their elements.
_CONTAINER_TYPES = frozenset({"List", "Tuple", "Dict", "list", "tuple", "dict", "Sequence",
                              "Iterable"})
_VALUES = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.BinOp, ast.UnaryOp, ast.Compare,
           ast.BoolOp, ast.IfExp, ast.NamedExpr)
#: Methods of a parameter that show it is an array, not a Python number or a flag: a test
#: on such a value of a parameter of model code is a presumed device read.
ARRAY_METHODS = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "prod", "std", "var", "norm", "median",
    "nanmedian", "nansum", "nanmean", "any", "all", "count_nonzero", "aminmax", "abs", "neg",
    "negative", "sqrt", "rsqrt", "exp", "log", "log1p", "log2", "log10", "detach", "clone",
    "contiguous", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "sigmoid", "tanh",
    "relu", "square", "reciprocal", "logical_not", "sign", "clamp", "clip", "floor", "ceil",
    "round", "trunc", "frac", "sin", "cos", "nan_to_num", "pow", "expm1", "erf",
})
#: Steps of fact computation per file before giving up (and answering "maybe").
_BUDGET = 200_000


class _OverBudget(Exception):
    pass


#: The kinds of binding (``_Collector._bind_name``) that LibCST's scopes record as
#: assignments as well, one for one: a parameter's "self" or "model argument" is a
#: second label of the same binding, and "other" holds bindings that LibCST may not
#: count (``case`` patterns).
_ASSIGNMENTS = frozenset({"value", "unpacked", "iterated", "counter", "parameter",
                          "annotated parameter"})


class MaybeTensors:
    """Answers "could this ``ast`` expression be a tensor (or an nn.Module)?" for one file."""

    def __init__(self, tree: ast.Module, model_functions: Collection[str] = ("forward",),
                 model_definitions: Collection[int] = ()) -> None:
        """``model_functions`` (names) and ``model_definitions`` (``id`` of definitions):
        the functions whose parameters are presumed to be tensors."""
        self._model_functions = frozenset(model_functions)
        self._model_definitions = frozenset(model_definitions)
        self._scopes: list[_Scope] = []
        #: the scope of every name in the file, by ``id`` of its node
        self._scope_of: dict[int, int] = {}
        #: (scope, name) -> how each binding binds it: (how, node); scope None: by spelling
        self._bindings: dict[tuple[int | None, str], list[tuple[str, ast.AST | None]]] = {}
        #: names an import from an array library binds (``np``, ``from numpy import zeros``)
        self._array_imports: set[str] = set()
        #: attribute -> what a tuple unpacking or a loop binds to attributes of that spelling
        self._attribute_sources: dict[str, list[tuple[str, ast.AST]]] = {}
        self._array_spellings: tuple[set[str], set[str], set[str]] | None = None
        #: answers about names (:meth:`_per_name`)
        self._name_answers: dict[tuple[object, ...], bool] = {}
        #: ``id`` of the values of plain ``name = value`` statements (one target, a name)
        self._plain_values: set[int] = set()
        #: names bound by ``global`` or ``nonlocal`` somewhere: resolved by spelling
        self._unscoped: set[str] = set()
        #: attribute -> what is assigned to attributes of that spelling: (how, node)
        self._attributes: dict[str, list[tuple[str, ast.AST]]] = {}
        #: function name -> its return values
        self._returns: dict[str, list[ast.expr]] = {}
        self._classes: set[str] = set()
        #: local name -> what it was imported as, from torch, math and numpy
        self._imports: dict[str, list[str]] = {"torch": ["torch"]}
        #: whether numpy-like arrays can occur (an array library is imported, or `.numpy()`)
        self._may_have_arrays = False
        #: the top-level packages the file imports (absolute imports)
        self._imported: set[str] = set()
        #: bindings (resolved) shown to hold tensors by a use: ``x.backward()``, ``F.relu(x)``
        self._evidence: set[tuple[int | None, str]] = set()
        self._memo: dict[tuple[str, object], bool] = {}
        self._bool_names: dict[str, bool] = {}
        self._active: set[tuple[str, object]] = set()
        self._assumed: set[tuple[str, object]] = set()
        self._steps = 0
        self._gave_up = False
        collector = _Collector(self)
        collector.visit(tree)
        #: whether the analysis may take ``x.item()`` / ``x.tolist()`` of an unknown ``x``
        #: for a read: the file imports a torch library (``unknown_read_rewritable`` also
        #: wants no array library; NSY906 reports such reads beside numpy too, with
        #: ``plausible_tensor``)
        self.reads_of_unknowns = bool(self._imported & T.TORCH_LIBRARIES)
        for scope, name in collector.evidence:
            self._evidence.update(self._resolve(scope, name))
        for scope, func, names in collector.calls_with_names:
            if any(_takes_tensors(q) for q in self.torch_names(func)):
                for name in names:  # `F.relu(x)`: the analysis takes x as a tensor
                    self._evidence.update(self._resolve(scope, name))

    # -- public questions ---------------------------------------------------------------------

    def tensor(self, node: ast.expr) -> bool:
        """Whether the analysis could call ``node`` a tensor."""
        return self._ask(self._tensor, node)

    def module(self, node: ast.expr) -> bool:
        """Whether the analysis could call ``node`` an nn.Module."""
        return self._ask(self._module, node)

    def device(self, node: ast.expr) -> bool:
        """Whether some part of ``node`` may be a tensor or reads one (``.item()`` ...)."""
        return self._ask(self._device, node)

    def model_argument(self, node: ast.expr) -> bool:
        """Whether ``node`` may be a parameter of ``forward`` or of a compiled function."""
        return isinstance(node, ast.Name) and any(
            how == "model argument" for how, _ in self._bindings_of(node))

    def bound_to_call(self, node: ast.expr) -> bool:
        """Whether ``node`` is a name that may be bound to the result of a call of unknown
        code (``per_tok = model(x, y)``): NSY503 reports a masked reduction of it whose
        result is used as a tensor."""
        return isinstance(node, ast.Name) and any(
            how == "value" and isinstance(value, ast.Call)
            for how, value in self._bindings_of(node))

    def mentions_model_argument(self, node: ast.expr) -> bool:
        """Whether a part of ``node`` computes from a name that may be a parameter of
        ``forward`` or of a compiled function with :data:`ARRAY_METHODS` (``h.abs().max()``,
        ``total`` bound to ``x.sum()``): the rules report tests on such values as presumed
        device reads (``rules._conditions.presumed_parameter``, which this mirrors)."""
        # Not below a part that is host whatever it holds (`h.shape[0] > 64`, `h.dtype ==
        # torch.float16`): the rules' presumption never looks through one.
        stack: list[ast.AST] = [node]
        while stack:
            part = stack.pop()
            if self._presumed(part, False, 0):
                return True
            if type(part) in (ast.Attribute, ast.Call) and self._host_whatever_its_parts(part):
                continue
            stack.extend(syntax.children(part))
        return False

    def _presumed(self, node: ast.AST, evidence: bool, depth: int) -> bool:
        if depth > 6:
            return False
        if isinstance(node, ast.Name):
            if evidence and self.model_argument(node):
                return True
            # Per depth too: the depth limit's False must not answer a shallower question.
            return self._per_name("presumed", node, (evidence, depth), lambda: any(
                how == "value" and value is not None and self._presumed(
                    value, evidence, depth + 1) for how, value in self._bindings_of(node)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                node.func.attr in ARRAY_METHODS):
            return self._presumed(node.func.value, True, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult,
                                                                ast.Div)):
            return self._presumed(node.left, evidence, depth + 1) or self._presumed(
                node.right, evidence, depth + 1)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self._presumed(node.operand, evidence, depth + 1)
        return False

    def _per_name(self, question: str, name: ast.Name, extra: tuple[object, ...],
                  answer: Callable[[], bool], assumed: bool | None = None) -> bool:
        """``answer()`` to ``question`` about ``name``, worked out once per name (by the
        scopes it resolves to) and ``extra``: the questions that follow a name's bindings
        asked each binding's names again at every use, so names each bound n times to
        the next (``b0 = b1.clone()`` n times, ``b1 = ...`` n times ...) cost n to the
        power of the chain's length. ``assumed`` stands for the answer while it is worked
        out (a name met again through its own bindings); without it, the question must
        not come back to the same key (``extra`` holds a depth that grows)."""
        key = (question, tuple(self._keys(name)), *extra)
        known = self._name_answers.get(key)
        if known is None:
            if assumed is not None:
                self._name_answers[key] = assumed
            known = self._name_answers[key] = answer()
        return known

    def host_predicate(self, call: ast.Call) -> bool:
        """``torch.equal(a, b)`` or ``torch.allclose(a, b)`` of tokenizer output alone
        (``ids = tokenizer(text, return_tensors="pt").input_ids``): a test of CPU tensors,
        which the rules' ``host_only`` (``rules._host``) accepts; this mirrors it strictly,
        for names bound once, by a plain ``name = value``, in the function that tests them."""
        if call.keywords or not call.args or not any(
                q in _DEVICE_PREDICATES for q in self.torch_names(call.func)):
            return False
        return all(self._made_by_tokenizer(argument, 0) for argument in call.args)

    def _made_by_tokenizer(self, node: ast.AST, depth: int) -> bool:
        """``rules._host._made_on_host`` down its tokenizer branch, step for step."""
        if depth > 8:
            return False
        if isinstance(node, ast.Name):
            keys = self._keys(node)
            if len(keys) != 1 or keys[0][0] != self._scope_of.get(id(node)):
                return False
            bindings = self._bindings_at(keys[0])
            if len(bindings) != 1:
                return False
            how, value = bindings[0]
            return how == "value" and id(value) in self._plain_values and (
                self._made_by_tokenizer(value, depth + 1))  # type: ignore[arg-type]
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            return self._made_by_tokenizer(node.value, depth + 1)
        return isinstance(node, ast.Call) and _is_tokenizer_call(node)

    def may_be_bool(self, node: ast.expr) -> bool:
        """Whether the rules could take ``node`` for a boolean tensor (a mask): an
        over-approximation of their dtype inference (``rules._device.dtype_family``),
        with names followed to every value assigned to that spelling in the file."""
        kind = type(node)
        if kind is ast.Compare:
            return all(isinstance(op, _ORDER_COMPARISONS) for op in node.ops)  # type: ignore
        if kind is ast.UnaryOp:
            return isinstance(node.op, (ast.Invert, ast.USub, ast.UAdd)) and (  # type: ignore
                self.may_be_bool(node.operand))  # type: ignore[attr-defined]
        if kind is ast.BinOp:
            return isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and (  # type: ignore
                self.may_be_bool(node.left) and self.may_be_bool(node.right))  # type: ignore
        if kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if any(k.arg == "dtype" for k in node.keywords):  # type: ignore[attr-defined]
                return True
            name = func.attr if isinstance(func, ast.Attribute) else (
                func.id if isinstance(func, ast.Name) else None)
            if name in T.BOOL_METHODS:
                return True
            return isinstance(func, ast.Attribute) and (
                name in T.SAME_DTYPE_FAMILY_METHODS) and self.may_be_bool(func.value)
        if kind is ast.Name:
            return self._bool_name(node.id)  # type: ignore[attr-defined]
        if kind is ast.Subscript:
            return self.may_be_bool(node.value)  # type: ignore[attr-defined]
        if kind is ast.Attribute:
            return node.attr in ("data", "grad") and self.may_be_bool(  # type: ignore
                node.value)  # type: ignore[attr-defined]
        return False

    def _bool_name(self, name: str) -> bool:
        known = self._bool_names.get(name)
        if known is None:
            # A cycle (`m = m & k`) makes the rules' answer unknown too: not boolean.
            self._bool_names[name] = False
            known = self._bool_names[name] = any(
                how == "value" and value is not None and self.may_be_bool(value)  # type: ignore
                for how, value in self._bindings_at((None, name)))
        return known

    def may_be_logger(self, node: ast.expr, depth: int = 0) -> bool:
        """Whether ``node`` may be a standard logger for NSY302: the ``logging`` module (or
        another import), ``logging.getLogger(...)``, ``logging.root``, or a name assigned
        one of these (the rule follows three names)."""
        if depth > 4:
            return True
        if isinstance(node, ast.Call):
            func = node.func
            return (isinstance(func, ast.Attribute) and func.attr == "getLogger") or (
                isinstance(func, ast.Name) and func.id == "getLogger")
        if isinstance(node, ast.Attribute):
            return node.attr == "root"
        if isinstance(node, ast.Name):
            # The depth limit answers True, which may stand for any depth, and so may
            # False, found without meeting it.
            return self._per_name("logger", node, (), lambda: any(
                how == "other" or (how == "value" and value is not None
                                   and self.may_be_logger(value, depth + 1))  # type: ignore
                for how, value in self._bindings_of(node)), assumed=True)
        return False

    def host_buffer(self, node: ast.expr) -> bool:
        """Whether ``node`` may be a host buffer for the rules (``is_host_buffer``): a name
        that may hold an array, or is bound to what a torch function, a method or
        ``reversed`` returns (``torch.zeros(n)``, ``x.cpu()``)."""
        if not isinstance(node, ast.Name):
            return False
        if self._may_have_arrays and node.id in self._array_names()[0]:
            return True  # some binding may give an array
        if self._bound_more_than_once(node):
            return False  # the rules ask for the value of the name's only binding
        return any(
            how == "value" and isinstance(value, ast.Call) and self._may_be_made_on_host(value)
            for how, value in self._bindings_of(node))

    def sequence(self, node: ast.expr) -> bool:
        """Whether ``node`` may be a Python sequence for NSY906 (``_sequence``): a list,
        tuple or string literal, a list comprehension, or a name some binding of which is
        one (NSY906 wants it the name's only binding)."""
        if isinstance(node, ast.Name):
            return any(how == "value" and _sequence_literal(value)
                       for how, value in self._bindings_of(node))
        return _sequence_literal(node)

    def _bound_more_than_once(self, node: ast.Name) -> bool:
        """Whether the rules' ``single_binding_value`` certainly finds no single binding of
        ``name``: its use resolves to one scope, where it is bound at least twice by
        bindings that LibCST's scopes count as assignments too (``x = ...``, ``x += ...``,
        a loop's or a parameter's name). ``global``/``nonlocal`` names, whose bindings are
        pooled here, and names seen through comprehensions never count."""
        keys = self._keys(node)
        if len(keys) != 1 or keys[0][0] is None:
            return False
        return sum(how in _ASSIGNMENTS for how, _ in self._bindings_at(keys[0])) >= 2

    def _array_names(self) -> tuple[set[str], set[str], set[str]]:
        """The spellings of the names, attributes and functions of the file that the
        analysis could find holding (or returning) a numpy-like array
        (``analysis.tensors.Value.ARRAY``): bound to an expression that holds an array
        source (:meth:`_array_sources`) or one of these spellings, or annotated with a type
        of an array library. Spellings, not scopes: a superset, computed once per file.

        Linear in the file: each binding is read once, and an array spelling is passed on
        to the bindings that mention it (a fixed point found by passes over every binding
        took one pass per link of ``a = b + 1``, ``b = c + 1``... ``z = np.zeros(3)``)."""
        if self._array_spellings is not None:
            return self._array_spellings
        found: tuple[set[str], set[str], set[str]] = (set(), set(), set())
        self._array_spellings = found
        sources = [(_NAME, {name: bindings for (scope, name), bindings in self._bindings.items()
                            if scope is None}),
                   (_ATTRIBUTE, self._attributes), (_ATTRIBUTE, self._attribute_sources),
                   (_FUNCTION, {name: [("value", v) for v in values]
                                for name, values in self._returns.items()})]
        # spelling -> the spellings bound to something that mentions it
        dependents: dict[tuple[int, str], list[tuple[int, str]]] = {}
        work: list[tuple[int, str]] = []

        def holds_array(spelling: tuple[int, str]) -> None:
            if spelling[1] not in found[spelling[0]]:
                found[spelling[0]].add(spelling[1])
                work.append(spelling)

        for kind, bound in sources:
            for spelling, bindings in bound.items():
                for how, value in bindings:
                    verdict = self._binding_sources(how, value)
                    if verdict is True:
                        holds_array((kind, spelling))
                    elif verdict:
                        for mentioned in verdict:  # type: ignore[union-attr]
                            dependents.setdefault(mentioned, []).append((kind, spelling))
        while work:
            for dependent in dependents.get(work.pop(), ()):
                holds_array(dependent)
        return found

    def _binding_sources(self, how: str, value: ast.AST | None,
                         ) -> bool | list[tuple[int, str]]:
        """For one binding: True when it may bind an array whatever the rest of the file
        holds, else the spellings through which it may (none: False or empty)."""
        if how in ("annotation", "annotated parameter"):
            return value is not None and any(
                isinstance(part, ast.Name) and part.id in self._array_imports
                for part in syntax.walk(value))
        if how == "value" and isinstance(value, _NOT_ARRAYS):
            return False  # a literal, or a container: what it holds is no value of the name
        if how in ("value", "unpacked", "iterated", "counter"):
            return value is not None and self._array_sources(value)
        # Imports, definitions, `with ... as`, `except ... as`, parameters without an
        # annotation, `self`: never an array for the analysis (a module, host or unknown).
        return how not in ("other", "self", "model argument", "parameter", "registered")

    def _array_sources(self, node: ast.AST) -> bool | list[tuple[int, str]]:
        """Whether ``analysis.tensors`` could give ``node`` the value ARRAY (or, for a
        container, an element that has it): True for an array library's function or
        constant, or a method of an array (``.numpy()`` of anything); else the names,
        attributes and local functions whose holding an array would make it one, as
        ``(kind, spelling)``, and what computes from those. Not the arguments of a call:
        the analysis gives no call an array from its arguments."""
        mentioned: list[tuple[int, str]] = []
        stack = [node]
        while stack:
            part = stack.pop()
            kind = type(part)
            if kind is ast.Name:
                if part.id in self._array_imports:  # type: ignore[attr-defined]
                    return True
                mentioned.append((_NAME, part.id))  # type: ignore[attr-defined]
            elif kind is ast.Attribute:
                mentioned.append((_ATTRIBUTE, part.attr))  # type: ignore[attr-defined]
                stack.append(part.value)  # type: ignore[attr-defined]
            elif kind is ast.Call:
                func = part.func  # type: ignore[attr-defined]
                if isinstance(func, ast.Attribute):
                    if func.attr == "numpy":
                        return True
                    stack.append(func)  # `np.zeros(...)`, a method of an array
                elif isinstance(func, ast.Name):
                    if func.id in self._array_imports:
                        return True
                    mentioned.append((_FUNCTION, func.id))
            elif kind is ast.Subscript or kind is ast.Starred or kind is ast.NamedExpr or (
                    kind is ast.Await):
                stack.append(part.value)  # type: ignore[attr-defined]
            elif kind is ast.UnaryOp:
                if not isinstance(part.op, ast.Not):  # type: ignore[attr-defined]
                    stack.append(part.operand)  # type: ignore[attr-defined]
            elif kind in (ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.List, ast.Tuple,
                          ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
                          ast.GeneratorExp):
                stack.extend(syntax.children(part))
            elif kind is ast.comprehension:
                stack.append(part.iter)  # type: ignore[attr-defined]
        return mentioned

    def _may_be_made_on_host(self, expr: ast.AST, depth: int = 0) -> bool:
        """Whether the rules could find ``expr`` made on the host (``rules._host.
        _made_on_host``, step for step, each step taken wherever it might apply): a CPU
        factory without ``device=`` or with a device written out, a tokenizer's output,
        ``.cpu()``, ``.numpy()``, ``.to(...)``, what a helper of the file returns, and what
        is cut from such a value, iterated (also through ``zip`` and ``enumerate``),
        ``reversed`` or computed by a method or torch function that keeps the device
        (``.float()``, ``.view(...)``, ``torch.sigmoid(...)``)."""
        if depth > 10:
            return True
        if isinstance(expr, ast.Name):
            # An answer found past the depth limit (or in a cycle) is True: more than the
            # rules may find, never less; it may stand for any depth.
            return self._per_name("made on host", expr, (), lambda: any(
                how in ("value", "iterated") and value is not None and (
                    isinstance(value, ast.Dict) or self._may_be_made_on_host(value, depth + 1))
                for how, value in self._bindings_of(expr)), assumed=True)
        if isinstance(expr, (ast.Subscript, ast.Attribute)):
            return self._may_be_made_on_host(expr.value, depth + 1)
        if not isinstance(expr, ast.Call):
            return False
        if any(k.arg == "return_tensors" for k in expr.keywords):
            return True  # tokenizer(text, return_tensors="pt")
        func = expr.func
        torch_names = tuple(self.torch_names(func))
        if any(q in T.CPU_FACTORIES for q in torch_names):
            device = next((k.value for k in expr.keywords if k.arg == "device"), None)
            if device is None or isinstance(device, (ast.Constant, ast.Call)):
                return True  # no device, or one written out: maybe "cpu"
        if any(q in T.KEEPS_DEVICE_FUNCTIONS for q in torch_names):
            return bool(expr.args) and self._may_be_made_on_host(expr.args[0], depth + 1)
        if isinstance(func, ast.Name):
            if func.id == "reversed":
                return bool(expr.args) and self._may_be_made_on_host(expr.args[0], depth + 1)
            if func.id in ("zip", "enumerate"):  # for a, b in zip(xs, ys): each of them
                return any(self._may_be_made_on_host(a, depth + 1) for a in expr.args)
            return any(self._may_be_made_on_host(value, depth + 1)
                       for value in self._returns.get(func.id, ()))
        if isinstance(func, ast.Attribute):
            if func.attr in ("cpu", "numpy", "to"):
                return True
            if func.attr in T.SAME_DEVICE_METHODS or func.attr in T.KEEPS_DEVICE_METHODS:
                return self._may_be_made_on_host(func.value, depth + 1)
        return False

    def _ask(self, question: Callable[[ast.expr], bool], node: ast.expr) -> bool:
        if self._gave_up:
            return True
        try:
            return question(node)
        except (_OverBudget, RecursionError):
            self._gave_up = True
            return True

    # -- names ---------------------------------------------------------------------------------

    def _resolve(self, scope: int | None, name: str) -> list[tuple[int | None, str]]:
        """The scopes whose bindings a use of ``name`` in ``scope`` may see."""
        if scope is None or name in self._unscoped:
            return [(None, name)]
        found: list[tuple[int | None, str]] = []
        passed_function = False
        current: int | None = scope
        while current is not None:
            info = self._scopes[current]
            if not (info.kind == "class" and passed_function) and name in info.bound:
                found.append((current, name))
                if info.kind != "comprehension":
                    break
            passed_function = passed_function or info.kind == "function"
            current = info.parent
        return found

    def _keys(self, node: ast.Name) -> list[tuple[int | None, str]]:
        return self._resolve(self._scope_of.get(id(node)), node.id)

    def _bindings_of(self, node: ast.Name) -> Iterator[tuple[str, ast.AST | None]]:
        for key in self._keys(node):
            yield from self._bindings_at(key)

    def _bindings_at(self, key: tuple[int | None, str]) -> list[tuple[str, ast.AST | None]]:
        return self._bindings.get(key, [])

    # -- expressions ---------------------------------------------------------------------------

    def _device(self, node: ast.expr) -> bool:
        # One walk: a read counts anywhere, a possible tensor only outside the parts
        # that are host whatever they hold (`len(x)`).
        stack: list[tuple[ast.AST, bool]] = [(node, False)]
        while stack:
            part, host = stack.pop()
            kind = type(part)
            if kind is ast.Call and _is_read_call(part):  # type: ignore[arg-type]
                return True
            if not host:
                if kind in _VALUES and self._tensor(part):
                    return True
                if kind is ast.Call and any(q in _DEVICE_PREDICATES for q in self.torch_names(
                        part.func)):  # type: ignore[attr-defined]
                    if not self.host_predicate(part):  # type: ignore[arg-type]
                        return True  # NSY401 checks `torch.allclose(a, b)` of any tensors
                    host = True
                else:
                    host = self._host_whatever_its_parts(part)
            stack.extend((child, host) for child in syntax.children(part))
        return False

    def _host_whatever_its_parts(self, node: ast.AST) -> bool:
        """``x.shape``, ``x.size(0)``, ``len(x)``, ``x is None``, ``k in d``: host values
        for the analysis, whatever ``x`` is (a read inside is found on its own)."""
        kind = type(node)
        if kind is ast.Attribute:
            return node.attr in T.TENSOR_HOST_ATTRIBUTES  # type: ignore[attr-defined]
        if kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if isinstance(func, ast.Attribute):
                return func.attr in T.METADATA_METHODS or (
                    func.attr in _TYPE_TESTS and any(
                        q in _TORCH_TYPE_TESTS for q in self.torch_names(func)))
            return isinstance(func, ast.Name) and func.id in T.HOST_RESULT_BUILTINS and not any(
                self._bindings_of(func))
        if kind is ast.Compare:
            return _host_comparison(node)  # type: ignore[arg-type]
        return False

    def _tensor(self, node: ast.AST) -> bool:
        kind = type(node)
        if kind is ast.Name:
            if node.id in ("True", "False", "None"):  # type: ignore[attr-defined]
                return False
            return any(self._fact("tensor", key) for key in self._keys(node))  # type: ignore
        if kind is ast.Attribute:
            return self._tensor_attribute(node)  # type: ignore[arg-type]
        if kind is ast.Call:
            return self._tensor_call(node)  # type: ignore[arg-type]
        if kind is ast.Subscript:
            base = node.value  # type: ignore[attr-defined]
            if isinstance(base, (ast.List, ast.Tuple)):
                return any(self._tensor(e) for e in base.elts)
            return self._tensor(base)
        if kind is ast.BinOp:
            return self._tensor(node.left) or self._tensor(node.right)  # type: ignore
        if kind is ast.UnaryOp:
            return not isinstance(node.op, ast.Not) and self._tensor(  # type: ignore
                node.operand)  # type: ignore[attr-defined]
        if kind is ast.Compare:
            return not _host_comparison(node) and any(  # type: ignore[arg-type]
                self._tensor(o) for o in (node.left, *node.comparators))  # type: ignore
        if kind is ast.BoolOp:  # joined: a tensor only when every operand is
            return all(self._tensor(v) for v in node.values)  # type: ignore[attr-defined]
        if kind is ast.IfExp:
            return self._tensor(node.body) and self._tensor(node.orelse)  # type: ignore
        if kind is ast.NamedExpr:
            return self._tensor(node.value)  # type: ignore[attr-defined]
        if kind is ast.Starred:
            return self._tensor(node.value)  # type: ignore[attr-defined]
        return False  # literals, containers, comprehensions, lambdas, f-strings

    def _module(self, node: ast.AST) -> bool:
        kind = type(node)
        if kind is ast.Name:
            return any(self._fact("module", key) for key in self._keys(node))  # type: ignore
        if kind is ast.Attribute:
            attr = node.attr  # type: ignore[attr-defined]
            base = node.value  # type: ignore[attr-defined]
            if attr in ("module", "_orig_mod") and self._module(base):
                return True
            return isinstance(base, ast.Name) and self._fact("module attribute", attr)
        if kind is ast.Call:
            return self._module_call(node)  # type: ignore[arg-type]
        if kind is ast.Subscript:
            base = node.value  # type: ignore[attr-defined]
            if isinstance(base, (ast.List, ast.Tuple)):
                return any(self._module(e) for e in base.elts)
            return self._module(base)
        if kind is ast.BoolOp:
            return all(self._module(v) for v in node.values)  # type: ignore[attr-defined]
        if kind is ast.IfExp:
            return self._module(node.body) and self._module(node.orelse)  # type: ignore
        if kind is ast.NamedExpr:
            return self._module(node.value)  # type: ignore[attr-defined]
        return False

    def _tensor_attribute(self, node: ast.Attribute) -> bool:
        attr, base = node.attr, node.value
        if attr in T.TENSOR_TENSOR_ATTRIBUTES and self._tensor(base):
            return True
        if attr in ("weight", "bias") and self._module(base):
            return True
        # `self.<attr>`: what the class assigns to it (any object's attribute, here).
        return isinstance(base, ast.Name) and self._fact("tensor attribute", attr)

    def _tensor_call(self, call: ast.Call) -> bool:
        func = call.func
        for q in self.torch_names(func):
            if q in T.TORCH_NAMESPACE_HOST_FUNCTIONS:
                return False
            if (q in T.TORCH_TENSOR_CLASSES or q.startswith(T.TORCH_TENSOR_NAMESPACES)
                    or q[len("torch."):] in T.TORCH_TENSOR_FUNCTIONS):
                return True
        if self._module(func):
            return True  # calling a module runs its forward
        if isinstance(func, ast.Name):
            name = func.id
            if name in T.TENSOR_PRESERVING_BUILTINS and any(
                    self._tensor(a) for a in call.args):
                return True
            return name in self._returns and self._fact("returns tensor", name)
        if isinstance(func, ast.Attribute):
            method, receiver = func.attr, func.value
            if method in ("item", "tolist", "parse_args", "parse_known_args") or (
                    method in T.METADATA_METHODS):
                return False
            if method == "detach":
                return True
            if method in ("forward", "__call__") and self._module(receiver):
                return True
            if method == "numpy" or method in T.TENSOR_HOST_METHODS:
                return False
            if method == "type" and not call.args and not call.keywords:
                return False
            return self._tensor(receiver)
        return False

    def _module_call(self, call: ast.Call) -> bool:
        func = call.func
        for q in self.torch_names(func):
            if q in T.MODULE_WRAPPERS or q.startswith("torch.nn."):
                return True
        if isinstance(func, ast.Name):
            if func.id in self._classes:
                return True
            return func.id in self._returns and self._fact("returns module", func.id)
        if isinstance(func, ast.Attribute):
            return func.attr in T.MODULE_RETURNING_SELF and self._module(func.value)
        return False

    def qualified_names(self, func: ast.expr) -> Iterator[str]:
        """What ``func`` may name in torch, math or numpy: ``F.relu`` ->
        ``torch.nn.functional.relu``, ``np.exp`` -> ``numpy.exp``."""
        parts: list[str] = []
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name):
            return
        rest = "".join("." + p for p in reversed(parts))
        for origin in self._imports.get(func.id, ()):
            yield origin + rest

    def torch_names(self, func: ast.expr) -> Iterator[str]:
        return (q for q in self.qualified_names(func) if q.split(".", 1)[0] == "torch")

    # -- iteration and unpacking ---------------------------------------------------------------

    def _element_tensor(self, value: ast.expr) -> bool:
        """An element of ``value`` when it is unpacked (``a, b = value``)."""
        if isinstance(value, _LITERALS):
            return any(self._element_tensor(e) for e in value.elts)
        return self._tensor(value)

    def _element_module(self, value: ast.expr) -> bool:
        if isinstance(value, _LITERALS):
            return any(self._element_module(e) for e in value.elts)
        return self._module(value)

    def _iterated_tensor(self, iterable: ast.expr) -> bool:
        """What a loop over ``iterable`` binds (any part of its target)."""
        if isinstance(iterable, ast.Call):
            func = iterable.func
            if isinstance(func, ast.Name) and func.id in _PASS_THROUGH_ITERATORS:
                return any(self._iterated_tensor(a) for a in iterable.args)
            if isinstance(func, ast.Attribute) and func.attr in _PARAMETER_METHODS:
                return True
        if isinstance(iterable, _LITERALS):
            return any(self._element_tensor(e) for e in iterable.elts)
        if isinstance(iterable, ast.Name) and any(
            how == "annotated parameter" and _mentions_type(node, _TENSOR_TYPE_NAMES)
            for how, node in self._bindings_of(iterable)
        ):
            return True  # `xs: list[Tensor]`
        return self._tensor(iterable)

    def _iterated_module(self, iterable: ast.expr) -> bool:
        if isinstance(iterable, ast.Call):
            func = iterable.func
            if isinstance(func, ast.Name) and func.id in _PASS_THROUGH_ITERATORS:
                return any(self._iterated_module(a) for a in iterable.args)
            if isinstance(func, ast.Attribute) and func.attr in _SUBMODULE_METHODS:
                return True
        if isinstance(iterable, _LITERALS):
            return any(self._element_module(e) for e in iterable.elts)
        return self._module(iterable)

    # -- facts ---------------------------------------------------------------------------------

    def _fact(self, kind: str, key: object) -> bool:
        memo_key = (kind, key)
        known = self._memo.get(memo_key)
        if known is not None:
            return known
        if memo_key in self._active:
            self._assumed.add(memo_key)
            return False
        self._steps += 1
        if self._steps > _BUDGET:
            raise _OverBudget
        self._active.add(memo_key)
        outer, self._assumed = self._assumed, set()
        try:
            result = self._compute(kind, key)
        finally:
            self._active.discard(memo_key)
        self._assumed.discard(memo_key)
        if result or not self._assumed:
            self._memo[memo_key] = result
        else:
            outer |= self._assumed  # a "no" that rests on an assumption still open
        self._assumed = outer
        return result

    def _compute(self, kind: str, key: object) -> bool:
        if kind == "tensor":
            return key in self._evidence or any(
                self._binding_tensor(how, node)
                for how, node in self._bindings_at(key))  # type: ignore[arg-type]
        if kind == "module":
            return any(self._binding_module(how, node)
                       for how, node in self._bindings_at(key))  # type: ignore[arg-type]
        if kind == "tensor attribute":
            return any(self._attribute_tensor(how, node)
                       for how, node in self._attributes.get(key, ()))  # type: ignore
        if kind == "module attribute":
            return any(how == "value" and self._module(node)  # type: ignore[arg-type]
                       for how, node in self._attributes.get(key, ()))  # type: ignore
        if kind == "returns tensor":
            return any(self._tensor(value) for value in self._returns[key])  # type: ignore
        if kind == "returns module":
            return any(self._module(value) for value in self._returns[key])  # type: ignore
        raise AssertionError(kind)

    def _binding_tensor(self, how: str, node: ast.AST | None) -> bool:
        if how == "value":
            return self._tensor(node)  # type: ignore[arg-type]
        if how == "unpacked":
            return self._element_tensor(node)  # type: ignore[arg-type]
        if how == "iterated":
            return self._iterated_tensor(node)  # type: ignore[arg-type]
        if how in ("annotation", "annotated parameter"):
            return _names_type(node, _TENSOR_TYPE_NAMES)
        if how == "counter":  # the builtin enumerate's index, unless the name is rebound
            return bool(self._bindings_at((None, "enumerate"))) and self._iterated_tensor(
                node)  # type: ignore[arg-type]
        return False

    def _binding_module(self, how: str, node: ast.AST | None) -> bool:
        if how == "value":
            return self._module(node)  # type: ignore[arg-type]
        if how == "unpacked":
            return self._element_module(node)  # type: ignore[arg-type]
        if how == "iterated":
            return self._iterated_module(node)  # type: ignore[arg-type]
        if how in ("annotation", "annotated parameter"):
            return _names_type(node, _MODULE_TYPE_NAMES)
        if how == "counter":
            return bool(self._bindings_at((None, "enumerate"))) and self._iterated_module(
                node)  # type: ignore[arg-type]
        return how == "self"

    def _attribute_tensor(self, how: str, node: ast.AST) -> bool:
        if how == "registered":
            return True
        if how == "annotation":
            return _names_type(node, _TENSOR_TYPE_NAMES)
        return self._tensor(node)


class _Scope:
    __slots__ = ("kind", "parent", "bound")

    def __init__(self, kind: str, parent: int | None) -> None:
        self.kind = kind  # "module", "function", "class" or "comprehension"
        self.parent = parent
        self.bound: set[str] = set()


class _Collector(ast.NodeVisitor):
    """One walk of the file: scopes, bindings, attribute assignments, returns, imports and
    the uses that are evidence of a tensor."""

    #: The visit method for each node type, looked up once (``NodeVisitor`` looks it up
    #: by name at every node, and visits every ``Load`` and ``Constant`` too).
    _methods: dict[type, Callable[[_Collector, ast.AST], None]] = {}

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        method = self._methods.get(kind)
        if method is None:
            method = getattr(type(self), "visit_" + kind.__name__, _Collector.generic_visit)
            self._methods[kind] = method
        method(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        for child in syntax.children(node):
            self.visit(child)

    def visit_Constant(self, node: ast.Constant) -> None:
        """Nothing to record (``NodeVisitor``'s own looks for the visitors of Python
        2-era node types, at every constant)."""

    def __init__(self, facts: MaybeTensors) -> None:
        self.facts = facts
        self.scope = self._new_scope("module", None)
        self._functions: list[str | None] = []  # the enclosing function names (None: lambda)
        self._class_body = False
        #: (scope, name) used as the receiver of an evidence method: ``x.backward()``
        self.evidence: list[tuple[int, str]] = []
        #: (scope, function, names passed to it positionally)
        self.calls_with_names: list[tuple[int, ast.expr, list[str]]] = []

    def _new_scope(self, kind: str, parent: int | None) -> int:
        self.facts._scopes.append(_Scope(kind, parent))
        return len(self.facts._scopes) - 1

    def _bind_name(self, name: str, how: str, node: ast.AST | None) -> None:
        """Record a binding of ``name`` in the current scope (any binding makes it local)."""
        self.facts._scopes[self.scope].bound.add(name)
        self.facts._bindings.setdefault((self.scope, name), []).append((how, node))
        self.facts._bindings.setdefault((None, name), []).append((how, node))

    def _attribute(self, attr: str, how: str, node: ast.AST) -> None:
        self.facts._attributes.setdefault(attr, []).append((how, node))

    def _target(self, target: ast.expr, how: str, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self._bind_name(target.id, how, value)
            if self._class_body and value is not None:  # read as `self.<name>` too
                self._attribute(target.id, "value", value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, "unpacked" if how == "value" else how, value)
        elif isinstance(target, ast.Starred):
            self._target(target.value, "other" if how != "iterated" else how, value)
        elif isinstance(target, ast.Attribute) and how == "value" and value is not None:
            self._attribute(target.attr, "value", value)
        elif isinstance(target, ast.Attribute) and value is not None:
            self.facts._attribute_sources.setdefault(target.attr, []).append((how, value))

    # -- bindings

    def visit_Name(self, node: ast.Name) -> None:
        self.facts._scope_of[id(node)] = self.scope

    def visit_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.facts._plain_values.add(id(node.value))
        for target in node.targets:
            self._target(target, "value", node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._target(node.target, "value", node.value)
        elif isinstance(node.target, ast.Name):
            self._bind_name(node.target.id, "annotation", node.annotation)
            if self._class_body:
                self._attribute(node.target.id, "annotation", node.annotation)
        elif isinstance(node.target, ast.Attribute):
            self._attribute(node.target.attr, "annotation", node.annotation)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, "value", node.value)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        # The target of `:=` in a comprehension belongs to the enclosing function.
        scope = self.scope
        while self.facts._scopes[self.scope].kind == "comprehension":
            self.scope = self.facts._scopes[self.scope].parent  # type: ignore[assignment]
        self._target(node.target, "value", node.value)
        self.scope = scope
        self.generic_visit(node)

    def _loop_target(self, target: ast.expr, iterable: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2 and (
            _is_call_of(iterable, "enumerate")
        ):  # `for i, x in enumerate(xs)`: i counts (if enumerate is the builtin)
            self._target(target.elts[0], "counter", iterable)
            self._target(target.elts[1], "iterated", iterable)
        else:
            self._target(target, "iterated", iterable)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._loop_target(node.target, node.iter)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._target(item.optional_vars, "other", None)
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind_name(node.name, "other", None)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.facts._scopes[self.scope].bound.add(target.id)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.facts._unscoped.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.facts._unscoped.update(node.names)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._bind_name(alias.asname or alias.name.split(".")[0], "other", None)
            root = alias.name.split(".")[0]
            self.facts._imported.add(root)
            if root in T.ARRAY_LIBRARIES:
                self.facts._may_have_arrays = True
                self.facts._array_imports.add(alias.asname or root)
            if root in _TRACKED_LIBRARIES:
                local = alias.asname or root
                origin = alias.name if alias.asname else root
                self.facts._imports.setdefault(local, []).append(origin)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        root = (node.module or "").split(".")[0] if not node.level else ""
        self.facts._imported.add(root)
        if root in T.ARRAY_LIBRARIES:
            self.facts._may_have_arrays = True
        for alias in node.names:
            if alias.name == "*":
                continue  # the analysis does not resolve star imports either
            self._bind_name(alias.asname or alias.name, "other", None)
            if root in T.ARRAY_LIBRARIES:
                self.facts._array_imports.add(alias.asname or alias.name)
            if root in _TRACKED_LIBRARIES:
                self.facts._imports.setdefault(alias.asname or alias.name, []).append(
                    f"{node.module}.{alias.name}")

    def generic_match(self, node: ast.AST) -> None:
        for name in (getattr(node, "name", None), getattr(node, "rest", None)):
            if isinstance(name, str):
                self._bind_name(name, "other", None)
        self.generic_visit(node)

    visit_MatchAs = visit_MatchStar = visit_MatchMapping = generic_match

    # -- scopes

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind_name(node.name, "other", None)
        self.facts._classes.add(node.name)
        for part in (*node.decorator_list, *node.bases, *node.keywords):
            self.visit(part)
        outer_scope, self.scope = self.scope, self._new_scope("class", self.scope)
        outer_functions, self._functions = self._functions, []
        outer_class, self._class_body = self._class_body, True
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function(statement, method=True)
            else:
                self.visit(statement)
        self._functions, self._class_body = outer_functions, outer_class
        self.scope = outer_scope

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._function(node, method=False)

    visit_AsyncFunctionDef = visit_FunctionDef

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> None:
        self._bind_name(node.name, "other", None)
        self.facts._returns.setdefault(node.name, [])
        for part in (*node.decorator_list, node.returns):
            if part is not None:
                self.visit(part)
        self._defaults(node.args)
        outer_scope, self.scope = self.scope, self._new_scope("function", self.scope)
        self._parameters(node.args, first_is_self=method and not any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list),
            model=node.name in self.facts._model_functions
            or id(node) in self.facts._model_definitions)
        outer_class, self._class_body = self._class_body, False
        self._functions.append(node.name)
        for statement in node.body:
            self.visit(statement)
        self._functions.pop()
        self._class_body = outer_class
        self.scope = outer_scope

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._defaults(node.args)
        outer_scope, self.scope = self.scope, self._new_scope("function", self.scope)
        self._parameters(node.args, first_is_self=False, model=False)
        self._functions.append(None)
        outer_class, self._class_body = self._class_body, False
        self.visit(node.body)
        self._class_body = outer_class
        self._functions.pop()
        self.scope = outer_scope

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp
                       | ast.DictComp) -> None:
        # The first iterable is evaluated outside; the rest in the comprehension's scope.
        self.visit(node.generators[0].iter)
        outer_scope, self.scope = self.scope, self._new_scope("comprehension", self.scope)
        outer_class, self._class_body = self._class_body, False
        for index, generator in enumerate(node.generators):
            self._loop_target(generator.target, generator.iter)
            self.visit(generator.target)
            if index:
                self.visit(generator.iter)
            for condition in generator.ifs:
                self.visit(condition)
        for part in ("elt", "key", "value"):
            value = getattr(node, part, None)
            if value is not None:
                self.visit(value)
        self._class_body = outer_class
        self.scope = outer_scope

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def _defaults(self, args: ast.arguments) -> None:
        for default in (*args.defaults, *args.kw_defaults):
            if default is not None:
                self.visit(default)
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None and arg.annotation is not None:
                self.visit(arg.annotation)

    def _parameters(self, args: ast.arguments, first_is_self: bool, model: bool) -> None:
        positional = [*args.posonlyargs, *args.args]
        for index, arg in enumerate((*positional, *args.kwonlyargs, args.vararg, args.kwarg)):
            if arg is None:
                continue
            if first_is_self and index == 0 and arg in positional:
                self._bind_name(arg.arg, "self", None)
            elif model:
                self._bind_name(arg.arg, "model argument", None)
            if arg.annotation is not None:
                self._bind_name(arg.arg, "annotated parameter", arg.annotation)
            else:
                self._bind_name(arg.arg, "parameter", None)

    def visit_Return(self, node: ast.Return) -> None:
        if self._functions and self._functions[-1] is not None and node.value is not None:
            self.facts._returns[self._functions[-1]].append(node.value)
        self.generic_visit(node)

    # -- uses

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name) and func.attr in _EVIDENCE_METHODS:
                self.evidence.append((self.scope, func.value.id))
            if func.attr in T.BACKWARD_METHODS:  # the analysis's _backward_argument, widened
                handed = [*node.args[:1], *(
                    func.value.args[:1] if isinstance(func.value, ast.Call) else ())]
                self.evidence.extend((self.scope, a.id) for a in handed
                                     if isinstance(a, ast.Name))
            if func.attr == "numpy":
                self.facts._may_have_arrays = True
            if func.attr in ("register_buffer", "register_parameter") and node.args and (
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            ):
                self._attribute(node.args[0].value, "registered", node)
        names = [a.id for a in node.args if isinstance(a, ast.Name)]
        if names:
            self.calls_with_names.append((self.scope, func, names))
        self.generic_visit(node)


#: Libraries whose imports are followed (for torch functions, and math of one number).
_TRACKED_LIBRARIES = frozenset({"torch", "math", "numpy"})
#: torch predicates the rules take for device conditions whatever their arguments.
_DEVICE_PREDICATES = frozenset({"torch.equal", "torch.allclose"})
#: torch functions that answer from an object's type or dtype alone, never reading it.
_TYPE_TESTS = frozenset({"is_tensor", "is_storage", "is_floating_point", "is_complex"})
_TORCH_TYPE_TESTS = frozenset(f"torch.{name}" for name in _TYPE_TESTS)
_ORDER_COMPARISONS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE, ast.Eq, ast.NotEq)


def _is_tokenizer_call(call: ast.Call) -> bool:
    """``tokenizer(text, return_tensors="pt")``, ``self.processor.encode(...,
    return_tensors="pt")``, as ``rules._host._is_tokenizer_call`` tells them (a string of
    one literal: LibCST sees ``"p" "t"`` as two)."""
    tensors = next((k.value for k in call.keywords if k.arg == "return_tensors"), None)
    if not (isinstance(tensors, ast.Constant) and tensors.value == "pt"
            and tensors.lineno == tensors.end_lineno
            and (tensors.end_col_offset or 0) - tensors.col_offset <= 5):  # u"pt" at most
        return False
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in T.TOKENIZER_METHODS:
        func = func.value
    name = func.attr if isinstance(func, ast.Attribute) else (
        func.id if isinstance(func, ast.Name) else "")
    return "tokenizer" in name.lower() or "processor" in name.lower()


def _is_call_of(node: ast.expr | None, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
        node.func.id == name)


def _is_read_call(call: ast.Call) -> bool:
    """A read (``.item()``, ``.tolist()``, ``.numpy()``, ``.cpu()``, ``.to(...)``), whatever
    its receiver."""
    func = call.func
    return isinstance(func, ast.Attribute) and (func.attr in T.READ_METHODS or func.attr == "to")


def _sequence_literal(node: ast.AST | None) -> bool:
    """A list, tuple or string literal, or a list comprehension."""
    return isinstance(node, (ast.List, ast.Tuple, ast.ListComp)) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str))


def _takes_tensors(q: str) -> bool:
    """torch functions whose positional arguments the analysis takes as tensors."""
    return q.startswith("torch.nn.functional.") or q[len("torch."):] in T.TENSOR_ONLY_FUNCTIONS


def _host_comparison(node: ast.Compare) -> bool:
    """``x is None``, ``k in d``, ``name == "text"``: a host bool whatever ``x`` is."""
    return any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops) or any(
        _is_text(o) for o in (node.left, *node.comparators))


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)))


def _names_type(annotation: ast.AST | None, names: frozenset[str]) -> bool:
    """Whether an annotation may name one of the types ``names`` (``Tensor``,
    ``Optional[Tensor]``, ``Tensor | None``), as the analysis reads annotations:
    ``list[Tensor]`` is a container, a string annotation unknown."""
    if isinstance(annotation, ast.Name):
        return annotation.id in names
    if isinstance(annotation, ast.Attribute):
        return annotation.attr in names
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _names_type(annotation.left, names) or _names_type(annotation.right, names)
    if isinstance(annotation, ast.Subscript):
        base = annotation.value
        spelled = base.id if isinstance(base, ast.Name) else (
            base.attr if isinstance(base, ast.Attribute) else None)
        if spelled in _CONTAINER_TYPES:
            return False
        element = annotation.slice
        if isinstance(element, ast.Tuple) and element.elts:
            element = element.elts[0]
        return _names_type(element, names)  # `Optional[Tensor]`, or an alias of it
    return False


def _mentions_type(annotation: ast.AST | None, names: frozenset[str]) -> bool:
    """Whether an annotation mentions one of ``names`` anywhere (``list[Tensor]``)."""
    return annotation is not None and any(
        (isinstance(part, ast.Name) and part.id in names)
        or (isinstance(part, ast.Attribute) and part.attr in names)
        for part in syntax.walk(annotation))
