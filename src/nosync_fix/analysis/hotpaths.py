"""Hot paths: is this line run once per step, where a sync costs?

Hot: statements in a ``for``/``while`` body (any depth) and ``while`` tests;
comprehension elements; ``forward`` of module classes; the wrapper a decorator of
forward methods returns (``@wraps(rope_forward)``) and the helpers nested beside it
that it calls; functions decorated with or passed to ``torch.compile``; functions
named ``*_step``; functions registered as per-batch callbacks
(``trainer.set_callback('on_batch_end', f)``); the configured hot functions.

Not hot: ``__init__`` and other set-up methods; ``__getitem__``/``__len__``/
``__iter__`` of Dataset and Sampler classes, collate functions and the methods of
collator classes (host-side loader code); test functions (``test_*``, but not
``test_step``) and test files; module-level code outside loops; code guarded by
``torch.compiler.is_compiling()`` (already deliberate about compiling).
"""

from __future__ import annotations

import functools

import libcst as cst

from . import _tables as T
from .base import COMPREHENSIONS, Metadata, own_code_nodes, positional_args
from .tensors import TensorFacts

_COMPILE = frozenset({"torch.compile", "torch._dynamo.optimize"})
_SCRIPT = frozenset({
    "torch.jit.script", "torch.jit.script_if_tracing", "torch.jit.script_method",
    "torch.jit._script.script", "torch.jit._script.script_method",
})
_IS_COMPILING = frozenset({
    "torch.compiler.is_compiling", "torch._dynamo.is_compiling", "torch.jit.is_scripting",
    "torch.jit.is_tracing", "torch.compiler.is_dynamo_compiling", "torch._utils.is_compiling",
})


class HotPaths:
    """Answers "does this node run on a hot path, and why?"."""

    def __init__(self, md: Metadata, facts: TensorFacts,
                 hot_functions: frozenset[str] = frozenset(), *,
                 test_module: bool = False) -> None:
        self.md = md
        #: A test file (``T.is_test_file_name``): nothing in it is hot.
        self.test_module = test_module
        self.facts = facts
        self.hot_functions = hot_functions
        self._memo: dict[int, str | None] = {}

    @functools.cached_property
    def _compiled(self) -> set[int]:
        return self._find_compiled_functions()

    @functools.cached_property
    def _forward_wrappers(self) -> set[int]:
        return self._find_forward_wrappers()

    def is_hot(self, node: cst.CSTNode) -> bool:
        return self.reason(node) is not None

    def reason(self, node: cst.CSTNode) -> str | None:
        """A short phrase saying why ``node`` is hot ("in a loop", "in forward"), or None."""
        key = id(node)
        if key not in self._memo:
            self._memo[key] = self._reason(node)
        return self._memo[key]

    def compiled_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The enclosing function that is decorated with or passed to ``torch.compile``."""
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef) and id(ancestor) in self._compiled:
                return ancestor
        return None

    def runs_compiled(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is in code this file compiles: a function decorated with or
        passed to ``torch.compile``, or ``forward`` of a module class every instance of
        which the file compiles on every path (``torch.compile(Model(...))``,
        ``m = Model(...)`` then ``torch.compile(m)`` or ``m.compile()``, outside an
        ``if``; see :meth:`_compiled_classes`)."""
        if self.compiled_function(node) is not None:
            return True
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef) and ancestor.name.value == "forward":
                cls = self._method_class(ancestor)
                return cls is not None and cls.name.value in self._compiled_classes
        return False

    @functools.cached_property
    def _compiled_classes(self) -> set[str]:
        """Classes every instance of which the file compiles, unconditionally.

        A class counts when each ``Model(...)`` in the file is passed to ``torch.compile``
        itself, or is bound to a name (or ``self`` attribute) that the same function (or
        module-level code) compiles (``torch.compile(m)``, ``m.compile()``) outside any
        ``if``, loop or ``try`` (``if __name__ == "__main__":`` aside). One eager instance
        (``self.fkl = ForwardKLLoss()``), or a compile that may not run (in a method
        such as torchtune's ``apply_compile_strategy``, under ``if cfg.compile:``), leaves
        the class's ``forward`` running eagerly, where torch.cond costs hundreds of times
        the ``if`` (issue 20)."""
        compiled_names: set[tuple[int, str]] = set()  # (id of the scope's owner, name)
        compiled_args: set[int] = set()  # ids of expressions passed to torch.compile
        for call in self.md.nodes(cst.Call):
            if self.md.qualified_names(call.func) & _COMPILE:
                args = positional_args(call)
                target = args[0] if args else None
            elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "compile" \
                    and not call.args:
                target = call.func.value  # nn.Module.compile()
            else:
                continue
            if target is None:
                continue
            compiled_args.add(id(target))
            owner = self._unconditional_owner(call)
            if owner is not None and _bound_name(target):
                compiled_names.add((id(owner), _bound_name(target)))
        classes: dict[str, bool] = {}
        for call in self.md.nodes(cst.Call):
            made_by = _constructor(call)
            if not made_by or self._chained(call):
                continue  # not a constructor, or the inner call of ``Model(...).to(...)``
            if id(call) in compiled_args:
                classes.setdefault(made_by, True)
                continue
            assign = self.md.parent(call)
            owner = self._owner(call)
            ok = isinstance(assign, cst.Assign) and assign.value is call and all(
                (id(owner), _bound_name(t.target)) in compiled_names and _bound_name(t.target)
                for t in assign.targets)
            classes[made_by] = classes.get(made_by, True) and ok
        return {name for name, ok in classes.items() if ok}

    def _chained(self, call: cst.Call) -> bool:
        """Whether ``call`` is the receiver of a method call (``Model(...)`` in
        ``Model(...).to(device)``): the outer call is the one judged."""
        parent = self.md.parent(call)
        return isinstance(parent, cst.Attribute) and parent.value is call and isinstance(
            self.md.parent(parent), cst.Call)

    def _owner(self, node: cst.CSTNode) -> cst.CSTNode:
        """The function whose body holds ``node``, or the module."""
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return ancestor
        return self.md.module

    def _unconditional_owner(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """:meth:`_owner` of ``node`` when every run of it reaches ``node``: no ``if``
        (but ``if __name__ == "__main__":``), loop, ``try``, ``with`` or conditional
        expression on the way; None otherwise."""
        previous = node
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return ancestor
            if isinstance(ancestor, cst.If) and not (
                previous is ancestor.body and _is_main_check(ancestor.test)):
                return None
            if isinstance(ancestor, (cst.IfExp, cst.For, cst.While, cst.Try, cst.TryStar,
                                     cst.With, cst.BooleanOperation, cst.Match,
                                     cst.ClassDef) + COMPREHENSIONS):
                return None
            previous = ancestor
        return self.md.module

    def scripted_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The enclosing function that TorchScript compiles (``@torch.jit.script``,
        ``@torch.jit.script_if_tracing``, ``@torch.jit.script_method``), if any.

        TorchScript accepts a subset of Python: a rewrite that is fine for eager mode
        and torch.compile (``if __debug__:``, a runtime import) may not compile there.
        """
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef) and self._decorated_with(ancestor, _SCRIPT):
                return ancestor
        return None

    def is_guarded_by_compile_check(self, node: cst.CSTNode) -> bool:
        """Inside ``if not torch.compiler.is_compiling():`` or similar."""
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, (cst.If, cst.IfExp)) and self._is_compile_check(ancestor.test):
                return True
            if isinstance(ancestor, cst.FunctionDef):
                return False
        return False

    def is_compile_check(self, test: cst.BaseExpression) -> bool:
        """Whether ``test`` asks ``torch.compiler.is_compiling()`` or a relative (maybe negated)."""
        return self._is_compile_check(test)

    # -- implementation ----------------------------------------------------------------------

    def _reason(self, node: cst.CSTNode) -> str | None:
        if self.test_module:
            return None
        in_loop: str | None = None
        previous: cst.CSTNode = node
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, cst.For) and previous is ancestor.body:
                in_loop = in_loop or "in a loop"
            elif isinstance(ancestor, cst.While) and (
                previous is ancestor.body or previous is ancestor.test
            ):
                in_loop = in_loop or "in a loop"
            elif isinstance(ancestor, COMPREHENSIONS) and previous is not ancestor.for_in:
                in_loop = in_loop or "in a comprehension"
            elif isinstance(ancestor, cst.CompFor) and (
                previous is ancestor.inner_for_in or any(previous is c for c in ancestor.ifs)
            ):
                in_loop = in_loop or "in a comprehension"
            elif isinstance(ancestor, (cst.If, cst.IfExp)) and previous is not ancestor.test:
                if self._is_compile_check(ancestor.test):
                    return None
            elif isinstance(ancestor, cst.FunctionDef):
                if self.is_cold_function(ancestor):
                    return None
                hot = self.hot_function_reason(ancestor)
                if hot is not None:
                    return in_loop or hot
            previous = ancestor
        return in_loop

    def in_traced_function(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is in the body of a function that ``torch.compile`` traces
        where it runs: ``forward`` of a module class (or a wrapper of one), or a function
        decorated with or passed to ``torch.compile`` (not the functions they call)."""
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                return id(ancestor) in self._compiled or self._is_forward(ancestor)
        return False

    def is_cold_function(self, func: cst.FunctionDef) -> bool:
        name = func.name.value
        if T.is_cold_function_name(name):
            return True
        cls = self._method_class(func)
        if cls is not None and name in T.DATASET_METHODS and self.facts.is_dataset_class(cls):
            return True
        return cls is not None and self.facts.is_collator_class(cls)

    def hot_function_reason(self, func: cst.FunctionDef) -> str | None:
        name = func.name.value
        if id(func) in self._compiled:
            return "in a compiled function"
        if name in self.hot_functions:
            return f"in {name}"
        if self._is_forward(func):
            return "in forward"
        if id(func) in self._batch_callbacks:
            return f"in a callback registered for {self._batch_callbacks[id(func)]!r}"
        if name.endswith(T.STEP_FUNCTION_SUFFIX) and name != T.STEP_FUNCTION_SUFFIX:
            return f"in {name}"
        return None

    def _is_forward(self, func: cst.FunctionDef) -> bool:
        """``forward`` of a module class (a class with bases), or a wrapper of one."""
        if func.name.value == "forward":
            cls = self._method_class(func)
            if cls is not None and (cls.bases or self.facts.is_module_class(cls)):
                return True
        return id(func) in self._forward_wrappers

    def _method_class(self, func: cst.FunctionDef) -> cst.ClassDef | None:
        block = self.md.parent(func)
        cls = self.md.parent(block) if block is not None else None
        return cls if isinstance(cls, cst.ClassDef) else None

    def _is_compile_check(self, test: cst.BaseExpression) -> bool:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test = test.expression
        if isinstance(test, cst.BooleanOperation):
            return self._is_compile_check(test.left) or self._is_compile_check(test.right)
        if isinstance(test, cst.Call):
            return bool(self.md.qualified_names(test.func) & _IS_COMPILING)
        return False

    def _decorated_with(self, func: cst.FunctionDef, names: frozenset[str]) -> bool:
        """Whether a decorator of ``func`` is one of ``names``, bare or called
        (``@torch.compile``, ``@torch.compile(backend=...)``)."""
        for decorator in func.decorators:
            expr = decorator.decorator
            if isinstance(expr, cst.Call):
                expr = expr.func
            if self.md.qualified_names(expr) & names:
                return True
        return False

    def _find_forward_wrappers(self) -> set[int]:
        """Functions that run as a module's forward although no class defines them there:

        ``def dynamic_rope_update(rope_forward): ... @wraps(rope_forward) def wrapper(...)``
        (Hugging Face's RoPE decorators) returns ``wrapper`` as the forward, and ``wrapper``
        calls helpers defined beside it. The parameter's name says it wraps a forward.
        """
        found: set[int] = set()
        for func in self.md.nodes(cst.FunctionDef):
            outer = self._enclosing_function(func)
            if outer is None or not self._wraps_forward(func, outer):
                continue
            found.add(id(func))
            siblings = {s.name.value: s for s in outer.body.body
                        if isinstance(s, cst.FunctionDef) and s is not func}
            for call in calls_in(func):
                if isinstance(call.func, cst.Name) and call.func.value in siblings:
                    found.add(id(siblings[call.func.value]))
        return found

    def _enclosing_function(self, func: cst.FunctionDef) -> cst.FunctionDef | None:
        block = self.md.parent(func)
        outer = self.md.parent(block) if isinstance(block, cst.IndentedBlock) else None
        return outer if isinstance(outer, cst.FunctionDef) else None

    def _wraps_forward(self, func: cst.FunctionDef, outer: cst.FunctionDef) -> bool:
        params = {p.name.value for p in (*outer.params.posonly_params, *outer.params.params)}
        for decorator in func.decorators:
            expr = decorator.decorator
            if not (isinstance(expr, cst.Call) and "functools.wraps" in
                    self.md.qualified_names(expr.func)):
                continue
            args = positional_args(expr)
            if args and isinstance(args[0], cst.Name) and args[0].value in params and (
                    "forward" in args[0].value):
                return True
        return False

    @functools.cached_property
    def _batch_callbacks(self) -> dict[int, str]:
        """Functions of this file registered as per-batch callbacks, by the event's name:
        ``trainer.set_callback('on_batch_end', batch_end_callback)`` (minGPT), also
        ``add_callback`` and ``register_callback``. The evidence is the registration
        itself: a method of that name called with a string literal that names a batch,
        step or iteration event (not an epoch) and a function defined in this file. A
        trainer calls such a function once per step, so its reads are on the hot path."""
        found: dict[int, str] = {}
        for call in self.md.nodes(cst.Call):
            if not (isinstance(call.func, cst.Attribute)
                    and call.func.attr.value in T.CALLBACK_REGISTRATIONS):
                continue
            args = positional_args(call)
            if len(args) != 2 or not isinstance(args[0], cst.SimpleString):
                continue
            event = args[0].evaluated_value
            if not isinstance(event, str) or not T.is_per_batch_event(event):
                continue
            definition = self.facts._local_definition(args[1])
            if isinstance(definition, cst.FunctionDef):
                found[id(definition)] = event
        return found

    def _find_compiled_functions(self) -> set[int]:
        compiled: set[int] = set()
        for func in self.md.nodes(cst.FunctionDef):
            if self._decorated_with(func, _COMPILE):
                compiled.add(id(func))
        for call in self.md.nodes(cst.Call):
            if not self.md.qualified_names(call.func) & _COMPILE:
                continue
            args = positional_args(call)
            if args and isinstance(args[0], cst.Name):
                definition = self.facts._local_definition(args[0])
                if isinstance(definition, cst.FunctionDef):
                    compiled.add(id(definition))
        return compiled


def _constructor(call: cst.Call) -> str:
    """``Model`` for ``Model(...)`` and ``Model(...).to(device).eval()``; "" otherwise."""
    while isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call):
        call = call.func.value
    return call.func.value if isinstance(call.func, cst.Name) else ""


def _is_main_check(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"``: a script's entry, run whenever the script is."""
    return isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and (
        test.left.value == "__name__") and len(test.comparisons) == 1 and isinstance(
        test.comparisons[0].operator, cst.Equal) and isinstance(
        test.comparisons[0].comparator, cst.SimpleString) and (
        test.comparisons[0].comparator.evaluated_value == "__main__")


def _bound_name(expr: cst.BaseExpression) -> str:
    """``model`` for ``model``, ``self.model`` for ``self.model``; "" for anything else."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        return f"{expr.value.value}.{expr.attr.value}"
    return ""


def calls_in(func: cst.FunctionDef) -> list[cst.Call]:
    """The calls in ``func``'s own body (not in functions or classes defined inside it)."""
    return own_code_nodes(func, (cst.Call,), in_lambdas=True)  # type: ignore[return-value]
