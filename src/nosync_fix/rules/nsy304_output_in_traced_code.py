"""NSY304 output-in-traced-code."""

from __future__ import annotations

import libcst as cst
from libcst.metadata.scope_provider import Assignment, GlobalScope

from ..analysis import _tables as T
from ..analysis.base import dotted_name
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._deferred import Planner, RuntimeNames
from ._helpers import short
from .base import Rule, RuleContext

#: Methods of a logger that find their caller by walking up the stack.
_STANDARD = T.LOGGING_METHODS | {"warn"}
#: transformers' de-duplicating wrappers: they call ``self.warning``/``self.info``
#: themselves, so the record's caller is theirs, compiled or not.
_ONCE = frozenset({"warning_once", "info_once"})
_LOGGER_FACTORIES = frozenset({"getLogger", "get_logger"})
_PRINT_KEYWORDS = frozenset({"sep", "end", "flush"})
_LOGGING_KEYWORDS = frozenset({"stacklevel"})
_WARN_KEYWORDS = frozenset({"message", "category", "stacklevel"})
#: The last name of every call this rule may rewrite (before import aliases).
_OUTPUT_NAMES = frozenset({"print", "warn"}) | T.LOGGING_METHODS | _STANDARD | _ONCE


class OutputInTracedCode(Rule):
    """
    ## What it does
    Finds `print(...)`, logging calls (`logger.warning_once(...)`,
    `logger.warning(...)`, `logging.info(...)`...) and `warnings.warn(...)` in
    code that `torch.compile` traces — the `forward` of a module class, a
    function decorated with or passed to `torch.compile`, and the functions
    and methods of the same file that those call — and makes each call with
    constant arguments a `nosync_fix.runtime.call_in_graph(__name__,
    "logger.warning_once", ...)` call: under `torch.compile` the call becomes
    an ordered operator of the graph, made each time the compiled code runs,
    in program order; in eager mode it is the original call.

    ## Why is this slow?
    Dynamo cannot trace a print, a logging call or a warning: it splits the
    graph at each one ("logging.Logger method not supported"), and the parts
    run as separate graphs with Python in between, losing fusion and memory
    planning across the split. T5, BART and BioGPT in transformers 4.52 have
    two or three such breaks each, all at a `logger.warning_once` with a
    constant message.

    ## Example
    ```python
    import torch


    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x, use_cache=True):
            if use_cache and self.training:
                print("use_cache=True is ignored in training")
            return self.linear(x).relu()


    block = Block()
    out = block(torch.ones(2, 4))
    ```

    ## Use instead
    ```python
    import torch
    from nosync_fix.runtime import call_in_graph


    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x, use_cache=True):
            if use_cache and self.training:
                call_in_graph(__name__, "print", "use_cache=True is ignored in training")
            return self.linear(x).relu()


    block = Block()
    out = block(torch.ones(2, 4))
    ```

    ## Fix safety
    Eager mode (and anything that runs the code without Dynamo) makes the
    original call: the same text, and the same caller for logging records and
    warnings (their `stacklevel` is raised by one for the extra frame).

    Under `torch.compile`:

    * `print` and `warning_once`/`info_once` (transformers' loggers): **safe**.
      The same text is written at the same point of the program; a
      `warning_once` record is made by the same method with the same
      arguments, so its caller fields and its once-only cache are the same.
    * the standard logging methods and `logging.info()`-style functions:
      **unsafe**. The record's `filename`/`funcName` name the compiled
      function, and its `lineno` is the line the compiled frame stands at,
      not the line of the call (the call is made by the graph, below the
      compiled frame). Its text, level, logger and order are the same.
    * `warnings.warn`: **unsafe**, for the same reason: the warning's location
      is the compiled function's frame, so the text printed under it differs,
      and two warnings with the same text from different lines of one
      compiled function are shown once, not twice, by the default filter.

    * an f-string whose fields are host numbers or strings
      (`f"padded {seq_len} to {seq_len + padding}"`, Longformer's padding
      warning): **unsafe**. Dynamo formats the fields while it traces, as it
      did for the original call's arguments up to the break, and guards on
      their values: the text is the same, and a new value compiles the code
      again, as it did before. The fields are known to be host values only as
      far as the analysis can follow them; a field that is a tensor, or may
      be one, or a shape (`x.shape`, `x.size()`, which Dynamo cannot format
      in the graph once shapes are dynamic), is left alone.

    Only calls whose arguments are literals (strings, numbers,
    `True`/`False`/`None`, a builtin warning class) or such f-strings are
    fixed, and only where the callee is `print`, `warnings.warn`, a `logging`
    function or a method of a module-level logger made by
    `getLogger`/`get_logger`. Anything else is reported without a fix:
    arguments that may be tensors or change between calls (a tensor's text
    under `torch.compile` differs; a Python value would be fixed into the
    graph), `file=`, `exc_info=`, `stack_info=`, `extra=`,
    `logger.exception`, `*args`. Prints and logging calls that read the
    device are NSY301's and NSY302's.

    ## When not to apply
    When a handler or warning filter must see the original source line under
    `torch.compile` (tests that assert on `lineno`): keep the call under
    `if not torch.compiler.is_compiling():` instead, which this rule leaves
    alone.
    """

    code = "NSY304"
    name = "output-in-traced-code"
    summary = "`print`, logging or `warnings.warn` in traced code: make it an operator of the graph"
    fix_kind = "safe/unsafe"
    cost = "graph break"
    #: Traced code is found by this rule itself (forward, compiled functions and
    #: what they call), not only on the analysis's hot paths.
    hot_paths_only = False
    triggers = ("print", "warn", "log")
    signals = Signal.TRACED_OUTPUT

    def __init__(self, context: RuleContext) -> None:
        super().__init__(context)
        self._names: RuntimeNames | None = None
        self._traced: dict[int, str] | None = None
        self._names_called: frozenset[str] | None = None

    # -- traced code -------------------------------------------------------------------------

    def _traced_functions(self) -> dict[int, str]:
        """``id`` of each traced function -> why it is traced ("in forward", ...)."""
        if self._traced is not None:
            return self._traced
        hot = self.analysis.hot
        functions = self.md.nodes(cst.FunctionDef)
        module_functions = {f.name.value: f for f in functions
                            if isinstance(self.md.parent(f), cst.Module)}
        traced: dict[int, str] = {}
        queue: list[cst.FunctionDef] = []
        for func in functions:
            reason = hot.hot_function_reason(func)
            if reason in ("in forward", "in a compiled function") and (
                    not hot.is_cold_function(func)):
                traced[id(func)] = reason
                queue.append(func)
        by_id = {id(f): f for f in functions}
        calls = self._calls_by_function()
        while queue:
            caller = queue.pop()
            for call in calls.get(id(caller), ()):
                callee = self._callee(call, caller, module_functions)
                if callee is None or id(callee) in traced or hot.is_cold_function(callee):
                    continue
                traced[id(callee)] = f"in `{callee.name.value}`, called from traced code"
                queue.append(by_id[id(callee)])
        self._traced = traced
        return traced

    def _calls_by_function(self) -> dict[int, list[cst.Call]]:
        """``id`` of a function -> the calls in its own body that may call a function of
        this file (``self.method(...)``, ``name(...)``): what :func:`calls_in` gives, with
        those callees, from one pass over the calls the analysis has indexed."""
        found: dict[int, list[cst.Call]] = {}
        for call in self.md.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Name) or isinstance(func, cst.Attribute) and (
                    isinstance(func.value, cst.Name) and func.value.value == "self")):
                continue
            for ancestor in self.md.ancestors(call):
                if isinstance(ancestor, cst.FunctionDef):
                    found.setdefault(id(ancestor), []).append(call)
                    break
                if isinstance(ancestor, cst.ClassDef):
                    break  # in a class body, not a function's
        return found

    def _callee(self, call: cst.Call, caller: cst.FunctionDef,
                module_functions: dict[str, cst.FunctionDef]) -> cst.FunctionDef | None:
        """The function of this file that ``call`` calls: ``self.method(...)`` in a method
        (a method of the same class), or a module-level function by its global name."""
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and (
                func.value.value == "self"):
            cls = self._class_of(caller)
            if cls is None:
                return None
            for statement in cls.body.body:
                if isinstance(statement, cst.FunctionDef) and (
                        statement.name.value == func.attr.value):
                    return statement
            return None
        if isinstance(func, cst.Name) and func.value in module_functions:
            definition = module_functions[func.value]
            if self._global_referents(func) == [definition]:
                return definition
        return None

    def _class_of(self, func: cst.FunctionDef) -> cst.ClassDef | None:
        block = self.md.parent(func)
        cls = self.md.parent(block) if block is not None else None
        return cls if isinstance(cls, cst.ClassDef) else None

    def _global_referents(self, name: cst.Name) -> list[cst.CSTNode] | None:
        """The nodes a name is bound to, when every binding is at module level."""
        access = self.md.access(name)
        if access is None or not access.referents:
            return None
        nodes: list[cst.CSTNode] = []
        for referent in access.referents:
            if not isinstance(referent, Assignment) or not isinstance(referent.scope,
                                                                       GlobalScope):
                return None
            nodes.append(referent.node)
        return nodes

    def _enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, cst.Lambda):
                return None
            if isinstance(ancestor, cst.FunctionDef):
                return ancestor
        return None

    # -- what is an output call --------------------------------------------------------------

    def _kind(self, call: cst.Call) -> tuple[str, str] | None:
        """``(kind, target)``: kind "print", "warn", "logging" (a standard method or
        function) or "once" (``warning_once``); target the dotted name to resolve."""
        func = call.func
        target = dotted_name(func)
        if target is None or target.rpartition(".")[2] not in self._output_names():
            return None  # cheap: most calls of a file are not named like an output call
        qualified = self.md.qualified_names(func)
        if isinstance(func, cst.Name):
            if "builtins.print" in qualified:
                return "print", target
            if self._global_referents(func) is None:
                return None  # a local or a parameter named like an output function
        if "warnings.warn" in qualified:
            return "warn", target
        if any(q.rpartition(".")[0] == "logging" and q.rpartition(".")[2]
               in T.LOGGING_METHODS for q in qualified):
            return "logging", target
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and (
                self._is_module_logger(func.value)):
            method = func.attr.value
            if method in _ONCE:
                return "once", target
            if method in _STANDARD:
                return "logging", target
        return None

    def _output_names(self) -> frozenset[str]:
        """The last names an output call may have: print, warn, the logging methods, and
        the names this file imports one of them as (``from warnings import warn as w``)."""
        if self._names_called is None:
            aliases = set()
            for node in self.md.nodes(cst.ImportFrom):
                if isinstance(node.names, cst.ImportStar):
                    continue
                for alias in node.names:
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name) and (
                            (dotted_name(alias.name) or "") in _OUTPUT_NAMES):
                        aliases.add(alias.asname.name.value)
            self._names_called = _OUTPUT_NAMES | aliases
        return self._names_called

    def _is_module_logger(self, name: cst.Name) -> bool:
        """A module-level name bound only to ``getLogger(...)``/``get_logger(...)``."""
        nodes = self._global_referents(name)
        if not nodes:
            return False
        for node in nodes:
            value = self._bound_value(node)
            if not (isinstance(value, cst.Call) and (dotted_name(value.func) or "").rpartition(
                    ".")[2] in _LOGGER_FACTORIES):
                return False
        return True

    def _bound_value(self, node: cst.CSTNode) -> cst.BaseExpression | None:
        target = self.md.parent(node)
        if isinstance(target, cst.AssignTarget):
            assign = self.md.parent(target)
            return assign.value if isinstance(assign, cst.Assign) else None
        if isinstance(target, cst.AnnAssign):
            return target.value
        return None

    # -- the rule ----------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        found = self._kind(node)
        if found is None:
            return
        kind, target = found
        func = self._enclosing_function(node)
        if func is None:
            return
        where = self._traced_functions().get(id(func))
        if where is None or self.analysis.hot.is_guarded_by_compile_check(node):
            return
        if self._names is None:
            self._names = RuntimeNames(self.analysis)
        planner = Planner(self.analysis, self._names)
        if any(planner.first_read(a.value) is not None for a in node.args):
            return  # a read of the device: NSY301 and NSY302 defer those
        what = f"`{short(node)}` {where} splits the graph under torch.compile"
        blocker = self._blocker(node, kind, target, planner)
        if blocker is None and not isinstance(self.md.parent(node), cst.Expr):
            blocker = "its value is used"
        if blocker is not None:
            self.report(node, f"{what} (no automatic fix: {blocker})")
            return
        rewrite = Rewrite("Make the call an operator of the graph: no break under "
                          "torch.compile, the original call in eager mode")
        if kind in ("warn", "logging") or any(_fields(a.value) for a in node.args):
            rewrite = rewrite.unsafe()
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        # Arguments that started on a line of their own still do, after the new head.
        last = comma.with_changes(whitespace_after=node.whitespace_before_args) if isinstance(
            node.whitespace_before_args, cst.ParenthesizedWhitespace) else comma
        head = [cst.Arg(cst.Name("__name__"), comma=comma),
                cst.Arg(cst.SimpleString(f'"{target}"'),
                        comma=last if node.args else cst.MaybeSentinel.DEFAULT)]
        new = node.with_changes(func=planner.names.ref("call_in_graph"),
                                args=[*head, *node.args])
        rewrite = planner.names.imports(rewrite.replace(node, new), {"call_in_graph"})
        self.report(node, f"{what}; make it an operator of the graph", rewrite)

    def _blocker(self, call: cst.Call, kind: str, target: str, planner: Planner) -> str | None:
        """Why the call cannot be rewritten, or None."""
        if target.endswith(".exception"):
            return "it records the exception being handled, which the graph cannot see"
        head = call.func
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(head, cst.Name):
            access = self.md.access(head)
            if access is not None and any(
                    isinstance(r, Assignment) and not isinstance(r.scope, GlobalScope)
                    for r in access.referents):
                # `import logging` inside forward: the module's globals have no `logging`.
                return (f"`{head.value}` is bound inside the function, and the runtime "
                        "looks the call up in the module's globals")
        allowed = {"print": _PRINT_KEYWORDS, "warn": _WARN_KEYWORDS}.get(kind,
                                                                          _LOGGING_KEYWORDS)
        for index, arg in enumerate(call.args):
            if arg.star:
                return f"it passes `{arg.star}{short(arg.value)}`"
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword is not None and keyword not in allowed:
                if keyword == "file":
                    return "it prints to a file object"
                return f"its `{keyword}=` argument is not passed through the graph"
            if kind == "warn" and (keyword == "category" or keyword is None and index == 1):
                if not self._builtin_warning(arg.value):
                    return f"its category `{short(arg.value)}` is not a builtin warning class"
                continue
            if _literal(arg.value):
                continue
            fields = _fields(arg.value)
            if fields:
                blocker = self._field_blocker(fields, planner)
                if blocker is not None:
                    return blocker
                continue
            if planner.is_tensor(arg.value):
                return (f"it outputs the tensor `{short(arg.value)}`, whose text under "
                        "torch.compile differs")
            return (f"`{short(arg.value)}` is not a literal: it may be a tensor (whose text "
                    "under torch.compile differs) or change between calls, which a graph "
                    "cannot print")
        return None

    def _field_blocker(self, fields: list[cst.BaseExpression], planner: Planner) -> str | None:
        """Why an f-string with these fields cannot be made an operator's argument: a
        field that may be a tensor, or a shape. Numbers and strings of the host are
        formatted by Dynamo while it traces, as they were before the fix (the original
        call's arguments are traced too, up to the break), and Dynamo guards on them."""
        for field in fields:
            if planner.is_tensor(field):
                return (f"it formats the tensor `{short(field)}`, whose text under "
                        "torch.compile differs")
            if _is_shape(field):
                return (f"it formats the shape `{short(field)}`, which Dynamo cannot format "
                        "in the graph once shapes are dynamic")
            if not self.analysis.tensors.is_host(field):
                return (f"the field `{short(field)}` may be a tensor (whose text under "
                        "torch.compile differs)")
        return None

    def _builtin_warning(self, expr: cst.BaseExpression) -> bool:
        return any(q.startswith("builtins.") and q.endswith("Warning")
                   for q in self.md.qualified_names(expr))


def _fields(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The expressions formatted by a string argument (its f-strings' fields, with those
    of their format specs); empty for anything that is not a string with fields."""
    if isinstance(expr, cst.ConcatenatedString):
        left, right = _fields(expr.left), _fields(expr.right)
        if (left or _literal(expr.left)) and (right or _literal(expr.right)):
            return left + right
        return []
    if not isinstance(expr, cst.FormattedString):
        return []
    fields: list[cst.BaseExpression] = []
    for part in expr.parts:
        if isinstance(part, cst.FormattedStringExpression):
            fields.append(part.expression)
            fields += _fields(cst.FormattedString(parts=part.format_spec or ()))
    return fields


def _is_shape(expr: cst.BaseExpression) -> bool:
    """``x.shape`` or ``x.size()``, written out."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "shape"
    return (isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "size")


def _literal(expr: cst.BaseExpression) -> bool:
    """A string without fields, a number, True/False/None."""
    if isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float)):
        return not (isinstance(expr, cst.SimpleString) and "b" in expr.prefix.lower())
    if isinstance(expr, cst.ConcatenatedString):
        return _literal(expr.left) and _literal(expr.right)
    if isinstance(expr, cst.FormattedString):
        return all(isinstance(part, cst.FormattedStringText) for part in expr.parts)
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return isinstance(expr.expression, (cst.Integer, cst.Float))
    return False
