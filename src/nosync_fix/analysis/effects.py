"""Effects: may this code be evaluated unconditionally, or moved?

A branch can become ``torch.where`` only when evaluating its untaken side does
nothing observable. That excludes random numbers (the stream would shift),
in-place updates, calls of unknown code, I/O, control flow and host reads.
"""

from __future__ import annotations

import enum

import libcst as cst

from . import _tables as T
from .base import Metadata, keyword_arg, visit
from .tensors import TensorFacts, Value


class Effect(enum.Flag):
    """What evaluating a piece of code may do besides computing its value."""

    NONE = 0
    RNG = enum.auto()  #: draws random numbers
    INPLACE = enum.auto()  #: mutates a tensor, an attribute, a subscript or a container
    CALL = enum.auto()  #: calls code we cannot see (a model, a user function)
    IO = enum.auto()  #: prints, logs or touches files
    CONTROL = enum.auto()  #: break, continue, return, raise, yield, await
    READ = enum.auto()  #: reads a device value on the host (a sync)
    BINDING = enum.auto()  #: global, nonlocal, del, import, def or class

    @property
    def pure(self) -> bool:
        return self is Effect.NONE


_IO_FUNCTIONS = frozenset({
    "builtins.print", "builtins.open", "builtins.input", "logging.debug", "logging.info",
    "logging.warning", "logging.warn", "logging.error", "logging.critical", "logging.exception",
    "logging.log", "warnings.warn", "torch.save", "torch.load",
})
_LOG_METHODS = frozenset({
    "debug", "info", "warning", "warn", "error", "critical", "exception", "log", "write",
    "flush", "add_scalar", "add_scalars", "add_histogram", "add_image", "set_postfix",
    "set_description", "update",
})
_MUTATING_CONTAINER_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "add", "setdefault",
    "sort", "reverse", "discard", "popitem", "appendleft", "extendleft", "popleft",
})
_READ_TORCH_FUNCTIONS = frozenset({
    "torch.equal", "torch.allclose", "torch.is_nonzero", "torch.cuda.synchronize",
})


class Effects:
    """Computes the :class:`Effect` of statements and expressions of one module."""

    def __init__(self, md: Metadata, facts: TensorFacts) -> None:
        self.md = md
        self.facts = facts
        self._memo: dict[int, Effect] = {}

    def of(self, node: cst.CSTNode) -> Effect:
        key = id(node)
        cached = self._memo.get(key)
        if cached is None:
            walker = _EffectWalker(self)
            visit(node, walker)
            cached = walker.effect
            self._memo[key] = cached
        return cached

    def is_pure(self, node: cst.CSTNode) -> bool:
        return self.of(node).pure

    # -- one call ----------------------------------------------------------------------------

    def call_effect(self, call: cst.Call) -> Effect:
        effect = Effect.NONE
        if keyword_arg(call, "generator") is not None:
            effect |= Effect.RNG
        if keyword_arg(call, "out") is not None:
            effect |= Effect.INPLACE
        inplace = keyword_arg(call, "inplace")
        if isinstance(inplace, cst.Name) and inplace.value == "True":
            effect |= Effect.INPLACE
        for q in self.md.qualified_names(call.func):
            found = self._qualified_effect(q, call)
            if found is not None:
                return effect | found
        func = call.func
        if self.facts.value(func) is Value.MODULE:
            return effect | Effect.CALL | (Effect.RNG if self._is_rng_module(func) else Effect.NONE)
        if isinstance(func, cst.Attribute):
            return effect | self._method_effect(func.value, func.attr.value, call)
        return effect | Effect.CALL

    def _qualified_effect(self, q: str, call: cst.Call) -> Effect | None:
        root, _, rest = q.partition(".")
        if q in _IO_FUNCTIONS:
            return Effect.IO
        if q in _READ_TORCH_FUNCTIONS:
            return Effect.READ
        if root == "builtins":
            if rest in ("float", "int", "bool", "complex"):
                args = call.args
                if args and self.facts.value(args[0].value) in (Value.TENSOR, Value.UNKNOWN):
                    return Effect.READ
                return Effect.NONE
            if rest in ("str", "repr", "format") and call.args and self.facts.is_tensor(
                call.args[0].value
            ):
                return Effect.READ
            if rest in T.PURE_BUILTINS or rest in T.CONTAINER_BUILTINS or (
                rest in T.TENSOR_PRESERVING_BUILTINS or rest == "sum"
            ) or rest.endswith(("Error", "Exception", "Warning")):
                return Effect.NONE  # building an exception object does nothing by itself
            return Effect.CALL
        if root == "torch":
            last = q.rsplit(".", 1)[-1]
            if q.startswith("torch.nn.functional."):
                return Effect.RNG if last in T.FUNCTIONAL_RNG else Effect.NONE
            if q.startswith("torch.nn.init."):
                return Effect.RNG | Effect.INPLACE
            if q.startswith(("torch.linalg.", "torch.fft.", "torch.special.")):
                return Effect.NONE
            if rest in T.TORCH_RNG_FUNCTIONS:
                return Effect.RNG
            if rest in T.TORCH_TENSOR_FUNCTIONS:
                return Effect.INPLACE if rest.endswith("_") else Effect.NONE
            if rest in ("tensor", "as_tensor", "zeros", "ones", "full", "empty"):
                return Effect.NONE
            return Effect.CALL
        if root in T.PURE_HOST_MODULES:
            return Effect.NONE
        if root in ("random",) or q.startswith("numpy.random."):
            return Effect.RNG
        return None

    def _method_effect(self, receiver: cst.BaseExpression, method: str,
                       call: cst.Call) -> Effect:
        value = self.facts.value(receiver)
        if value is Value.TENSOR:
            if method in T.TENSOR_RNG_METHODS:
                return Effect.RNG | (Effect.INPLACE if method.endswith("_") else Effect.NONE)
            if method in ("item", "tolist", "numpy", "cpu", "__bool__", "__float__",
                          "__int__", "__index__", "equal", "allclose", "is_nonzero", "nonzero",
                          "unique", "masked_select"):
                return Effect.READ
            if method in ("to",) and _moves_to_cpu(call):
                return Effect.READ
            if method == "backward":
                return Effect.CALL
            if method.endswith("_") and not method.endswith("__"):
                return Effect.INPLACE
            if method in ("register_hook", "retain_grad", "record_stream", "share_memory_"):
                return Effect.CALL
            return Effect.NONE
        if value is Value.MODULE:
            return Effect.CALL
        if method in ("item", "tolist") and value is Value.UNKNOWN:
            return Effect.READ | Effect.CALL
        if method in _LOG_METHODS:
            return Effect.IO
        if value in (Value.HOST, Value.ARRAY, Value.CONTAINER):
            if method in _MUTATING_CONTAINER_METHODS:
                return Effect.INPLACE
            return Effect.NONE
        return Effect.CALL

    def _is_rng_module(self, func: cst.BaseExpression) -> bool:
        """Whether calling ``func`` runs a Dropout-like module (assigned in this file)."""
        assigned = self._module_constructor(func)
        return assigned is not None and assigned in T.RNG_MODULE_CLASSES

    def _module_constructor(self, func: cst.BaseExpression) -> str | None:
        target = func
        values: list[cst.CSTNode] = []
        if isinstance(target, cst.Attribute):
            cls = self.facts._self_class(target.value)
            if cls is not None:
                for how, node in self.facts._class_attributes(cls).get(target.attr.value, []):
                    if how == "value":
                        values.append(node)
        for value in values:
            if isinstance(value, cst.Call):
                for q in self.md.qualified_names(value.func):
                    return q.rsplit(".", 1)[-1]
        return None


def _moves_to_cpu(call: cst.Call) -> bool:
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.SimpleString) and value.evaluated_value in ("cpu",):
            return True
    return False


class _EffectWalker(cst.CSTVisitor):
    def __init__(self, effects: Effects) -> None:
        self.effects = effects
        self.effect = Effect.NONE
        self._root_seen = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        first = not self._root_seen
        self._root_seen = True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self.effect |= Effect.BINDING
            return False
        if isinstance(node, cst.Lambda):
            return first
        if isinstance(node, (cst.Break, cst.Continue, cst.Return, cst.Raise, cst.Yield,
                             cst.Await)):
            self.effect |= Effect.CONTROL
        elif isinstance(node, (cst.Global, cst.Nonlocal, cst.Del, cst.Import, cst.ImportFrom)):
            self.effect |= Effect.BINDING
        elif isinstance(node, cst.Call):
            self.effect |= self.effects.call_effect(node)
        elif isinstance(node, cst.AssignTarget):
            self._target(node.target)
        elif isinstance(node, cst.AnnAssign):
            self._target(node.target)
        elif isinstance(node, cst.AugAssign):
            if not isinstance(node.target, cst.Name) or self.effects.facts.value(
                node.target
            ) in (Value.TENSOR, Value.UNKNOWN, Value.CONTAINER, Value.ARRAY):
                self.effect |= Effect.INPLACE  # `t += 1` updates the tensor in place
        elif isinstance(node, (cst.If, cst.While)):
            self._condition(node.test)
        elif isinstance(node, cst.IfExp):
            self._condition(node.test)
        elif isinstance(node, cst.Assert):
            self._condition(node.test)
        elif isinstance(node, cst.BooleanOperation):
            self._condition(node.left)
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            self._condition(node.expression)
        elif isinstance(node, cst.FormattedStringExpression):
            if self.effects.facts.value(node.expression) in (Value.TENSOR,):
                self.effect |= Effect.READ
        return True

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Attribute, cst.Subscript)):
            self.effect |= Effect.INPLACE
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value)

    def _condition(self, test: cst.BaseExpression) -> None:
        if self.effects.facts.value(test) is Value.TENSOR:
            self.effect |= Effect.READ
