"""NSY906 unhandled-host-read: the fallback finding."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import libcst as cst

from ..analysis import Kind
from ..analysis import _tables as T
from ..analysis.base import call_name, dotted_name, sole_value
from ..analysis.reads import on_host
from ..prefilter import Signal
from ._device import dtype_family
from ._helpers import short
from ._hoist import numeric_type
from ._host import certainly_on_host, host_only, host_transfer, iterated_tensor, loaded_to_device
from .base import Rule

#: What each kind of read does, for the message.
_WHAT = {
    "item": "reads a device value into a Python number",
    "tolist": "copies a device tensor into a Python list",
    "float": "converts a device value to a Python float",
    "int": "converts a device value to a Python int",
    "bool": "converts a device value to a Python bool",
    "cpu": "copies a tensor to the host",
    "numpy": "copies a tensor to the host",
    "to": "copies a tensor to the host",
    "condition": "tests a device value for truth",
    "format": "formats a device value as text",
    "mask": "assigns through a boolean mask (the selected elements are counted first)",
    "compare": "compares device values on the host (`max` and `min` test each comparison "
               "for truth)",
    "range": "converts a device value to a Python int for `range`",
    "lookup": "converts a device value to a Python int to index a Python sequence",
    "elements": "tests each element of a device tensor for truth (`any` and `all` iterate "
                "it on the host)",
    "contains": "tests membership in a device tensor (`x in t` compares every element "
                "and reads the answer on the host)",
    "element": "",
}
#: What a read does to a tensor made on the CPU, read in code torch.compile traces.
_WHAT_ON_HOST = {
    "item": "reads a CPU tensor into a Python number",
    "tolist": "copies a CPU tensor into a Python list",
    "float": "converts a CPU tensor to a Python float",
    "int": "converts a CPU tensor to a Python int",
    "bool": "converts a CPU tensor to a Python bool",
}
#: Tensor methods that reduce to one number: formatting their result reads it.
_REDUCTIONS = frozenset({"max", "min", "mean", "sum", "norm", "std", "var", "amax", "amin",
                         "prod", "median", "logsumexp"})


def _calls_in(expr: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    expr.visit(Calls())
    return found


#: Methods of nn.Module that return the module itself.
_MODULE_CHAIN = frozenset({"eval", "train", "to", "cuda", "cpu", "float", "half", "double",
                           "bfloat16", "requires_grad_", "share_memory", "to_empty"})


def _is_str_format(node: cst.Call) -> bool:
    """``"...".format(...)``."""
    return isinstance(node.func, cst.Attribute) and node.func.attr.value == "format" and (
        isinstance(node.func.value, (cst.SimpleString, cst.ConcatenatedString)))


def _passes_value_on(md, child: cst.CSTNode, parent: cst.CSTNode) -> bool:  # type: ignore
    """Whether ``parent`` only carries ``child``'s value on to where it is used: text made
    from it (f-strings, ``%``, ``"...".format``), arithmetic, a method chain on it
    (``x.cpu().numpy()``, ``t.tolist()[0]``), a tuple being formatted."""
    if isinstance(parent, (cst.FormattedStringExpression, cst.FormattedString,
                           cst.BinaryOperation, cst.UnaryOperation, cst.ConcatenatedString,
                           cst.Comparison, cst.ComparisonTarget, cst.BooleanOperation)):
        return True
    if isinstance(parent, (cst.Attribute, cst.Subscript)):
        return parent.value is child
    if isinstance(parent, cst.Call):
        return parent.func is child or _is_str_format(parent)
    if isinstance(parent, cst.Arg):
        call = md.parent(parent)
        return isinstance(call, cst.Call) and _is_str_format(call)
    if isinstance(parent, cst.IfExp):
        return parent.test is not child  # `f"..." if ready else ""`: either side's value
    if isinstance(parent, (cst.Element, cst.Tuple)):
        above = md.parent(parent)
        return isinstance(above, cst.Tuple) or isinstance(parent, cst.Tuple) and isinstance(
            above, cst.BinaryOperation)
    return False


def _makes_text(node: cst.CSTNode) -> bool:
    """Whether ``node``, on the way from a read to its use, makes text of it: an f-string,
    ``%`` of a string, ``"...".format(...)``."""
    if isinstance(node, (cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        return isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString,
                                      cst.FormattedString))
    return isinstance(node, cst.Call) and _is_str_format(node)


_NOUN = {"converts": "conversion", "reads": "read", "formats": "format"}
#: The reads that also break a torch.compile graph (a copy to the host does not).
_BREAKS = frozenset({"item", "tolist", "float", "int", "bool", "condition", "format",
                     "element", "compare", "range", "lookup", "elements", "contains"})

#: Python floats of math and numpy, which index_put_ takes as a number (no tensor).
_NUMBER_CONSTANTS = frozenset({"math.inf", "math.nan", "math.pi", "math.e", "math.tau",
                               "numpy.inf", "numpy.nan", "numpy.pi", "numpy.e"})
#: ``torch.finfo(dtype).min`` and the like: Python numbers.
_NUMBER_INFO = frozenset({"torch.finfo", "torch.iinfo"})
_INFO_LIMITS = frozenset({"min", "max", "eps", "tiny", "smallest_normal", "resolution"})


class UnhandledHostRead(Rule):
    """
    ## What it does
    Reports every host read of a device value on a hot path that no other rule
    reports: `.item()`, `float(t)`, `int(t)`, `bool(t)`, `.tolist()`, copies to
    the host (`.cpu()`, `.numpy()`, `.to("cpu")`), a tensor tested for truth
    (`if t:`, `x if t else y`, `assert t`, `done = not t`, `t.any() and x`),
    a tensor formatted into text (`f"{t:.3f}"`, `"{:.3f}".format(t)`,
    `"%.3f" % t`, `str(t)`, `repr(t)`, `format(t, ".3f")`), tensors compared
    by `max`/`min` (`best = min(best, loss)`: each comparison is tested for
    truth), each element of a tensor tested by `any`/`all` (`if any(x > 0):`),
    membership in a tensor (`if token in eos_ids:` with `eos_ids` a tensor is
    `(eos_ids == token).any()`, read on the host),
    a tensor counted by `range(n)` or indexing a Python sequence
    (`classes[pred]` with `classes = ("cat", "dog")`), and an assignment
    through a boolean mask of a value that is not a Python number
    (`x[mask] = y[mask]`, `x[mask] += 1`; `x[mask] = 0`, `-float("inf")` or
    `torch.finfo(x.dtype).min` is a `masked_fill_` in ATen: no wait, no
    graph break). A comparison of a tensor with a
    name that may hold a tensor loaded onto the device counts too (`if score <
    best:` with `best = state["best"]` and `state = torch.load(path,
    map_location=device)`): a CPU tensor met by a device one is compared on the
    device. So does converting or formatting each element of a tensor being
    iterated (`for i, w in enumerate(W): "{:+.2f}".format(w)`) when the analysis
    cannot type `W` itself but has evidence: `W` is a parameter of a function of
    the file that every call passes a tensor (not only tensors made on the
    host), or `W` is cut from `model.generate(...)` of a module: one read per
    element, where `W.tolist()` before the loop reads once. The message says what the read is
    and why no fix is offered: its result is never used, it is handed to a call nosync-fix does
    not know (`logger.warning_once(...)`, a helper of your own), it is returned,
    or no rule recognises how its value is used.

    It is the fallback: a read that another rule reports (fixed or not) is left
    to that rule, even when the other rule is not selected or its finding is
    suppressed with `noqa`, so that each read is reported once. No read on a
    hot path goes unreported.

    Tensors the analysis knows to live on the CPU are not reported: made by a
    factory without `device=` (`torch.zeros(n)`, `torch.randperm(n)`,
    `torch.tensor(values)` of data that holds no tensor, `torch.Tensor(values)`,
    `torch.from_numpy(a)`, `torch.as_tensor` of host data), copied with `.cpu()`
    or `.to("cpu")`, a tokenizer's output, and what is cut from, iterated (also
    through `zip` and `enumerate`) or cast (`.to(torch.long)`) from those. Except
    in the `forward` of a module class or a compiled function: there, reading
    one into a Python value (`.item()`, `.tolist()`, `int(...)`) waits for
    nothing but still breaks the graph, and is reported as such.

    ## Why is this slow?
    Reading a device value makes the host wait for everything queued before
    it, and under `torch.compile` it splits the graph. A linter that stays
    silent about such a read lets the user believe the loop is clean.

    ## Example
    ```python
    import torch


    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.ones(()))

        def forward(self, x):
            v = self.scale.item()
            return x * self.scale
    ```

    ## Use instead
    ```python
    import torch


    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.ones(()))

        def forward(self, x):
            return x * self.scale
    ```

    Delete reads whose value is not needed; keep values that are needed on the
    device (return the tensor, pass it on, combine it with `torch.where`) and
    read them once, where the host really needs the number.

    ## Fix safety
    There is no automatic fix: each of these reads feeds code that nosync-fix
    cannot prove it may change.

    ## When not to apply
    When the read is deliberate and rare (once per epoch, behind a flag), or
    the tensor is known to live on the CPU: suppress the line with
    `# noqa: NSY906`.
    """

    code = "NSY906"
    name = "unhandled-host-read"
    summary = "A host read on a hot path that no other rule reports: what it is, why no fix"
    fix_kind = "none"
    cost = "sync"
    #: The engine hands this rule the nodes the other rules report (:meth:`leftovers`).
    fallback: ClassVar[bool] = True
    # "]": `x[mask] = t`; "not", "and", "or": a tensor tested outside a condition; "%",
    # "str(", "repr(", "format(": text made from a tensor without an f-string; "max(",
    # "min(", "range(", "any(", "all(": comparisons, counts and tests of a tensor; " in ":
    # membership in one.
    triggers = (".item(", ".tolist(", ".cpu(", ".numpy(", ".to(", "float(", "int(", "bool(",
                "if ", "while ", "assert ", "{", "]", "not ", " and ", " or ", "%", "str(",
                "repr(", "format(", "max(", "min(", "range(", "any(", "all(", " in ")
    signals = (Signal.READ | Signal.CONDITION | Signal.OUTPUT | Signal.STORE
               | Signal.DATA_DEPENDENT | Signal.IMPLICIT_READ)

    def __init__(self, context) -> None:  # type: ignore[no-untyped-def]
        super().__init__(context)
        #: (node, kind of read) of every read on a hot path, in source order.
        self.sites: list[tuple[cst.CSTNode, str]] = []
        self._seen: set[int] = set()
        #: Reads of values only plausibly tensors (``.item()`` beside numpy).
        self._uncertain: set[int] = set()
        #: Reads of tensors made on the CPU, in code torch.compile traces.
        self._on_host: set[int] = set()
        #: Comparisons with a value that may be loaded onto the device: (name, binding).
        self._loaded: dict[int, tuple[str, str]] = {}
        #: Reads of the elements of an iterated tensor: (the tensor's text, the evidence).
        self._elements: dict[int, tuple[str, str]] = {}

    # -- collecting the reads ----------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        if _is_str_format(node):
            for arg in node.args:
                self._formatted(arg.value, spec=True)
            return
        compared = self._compared_by(node)
        if compared is not None:
            self._site(node, compared)
            return
        text = self._text_of(node)
        if text is not None:
            # `str(t)`, `repr(t)`: the tensor's values in text; `format(t, ".3f")`: a number
            self._formatted(text, spec=call_name(node) == "format")
            return
        read = self.analysis.host_read(node)
        if read is not None:
            if not certainly_on_host(self.analysis, read.tensor):
                self._site(node, read.how)
            elif read.how in _WHAT_ON_HOST and self.analysis.hot.in_traced_function(node):
                self._on_host.add(id(node))  # no wait, but still a graph break
                self._site(node, read.how)
            return
        element = self._element_read(node)
        if element is not None:
            self._elements[id(node)] = element
            self._site(node, "element")
            return
        how = host_transfer(self.analysis, node) or self._copy_of_unknown(node)
        if how is not None:
            self._site(node, how)
            return
        # `loss.item()` of a value of unknown kind beside `import numpy as np`: numpy has
        # `.item()` and `.tolist()` too, so no rule may rewrite it, but a report may say so.
        if call_name(node) in ("item", "tolist") and not node.args and isinstance(
                node.func, cst.Attribute) and self.analysis.kind(node.func.value) is (
                Kind.UNKNOWN) and self.analysis.tensors.plausible_tensor(node.func.value) and (
                not on_host(self.md, node.func.value)) and not certainly_on_host(
                self.analysis, node.func.value):
            self._uncertain.add(id(node))
            self._site(node, call_name(node) or "item")

    def _compared_by(self, node: cst.Call) -> str | None:
        """``max(best, loss)``, ``min([a, b])`` of a device tensor: each comparison is a
        tensor tested for truth; ``range(n)`` of one: ``n.__index__()``. Not with ``key=``
        (the key's results are compared), nor ``max(x)`` of one iterable: a tensor's
        elements would be compared, but such an ``x`` is more often a list of numbers the
        analysis takes for a tensor (what a module's call returns, unpacked)."""
        if not isinstance(node.func, cst.Name) or node.func.value not in T.COMPARING_BUILTINS:
            return None
        if f"builtins.{node.func.value}" not in self.md.qualified_names(node.func) or any(
                a.keyword is not None or a.star for a in node.args) or not node.args:
            return None
        if node.func.value in ("any", "all"):
            # `any(x > 0)`: one test per element. Only of an expression that makes a tensor
            # (a name may be a list the analysis takes for one, as for `max(x)` below).
            tested = node.args[0].value
            if len(node.args) == 1 and isinstance(tested, (
                    cst.Comparison, cst.Call, cst.UnaryOperation, cst.BinaryOperation)) and (
                    self._on_device(tested)):
                return "elements"
            return None
        if node.func.value != "range" and len(node.args) == 1:
            if not isinstance(node.args[0].value, (cst.List, cst.Tuple)):
                return None
            values = [e.value for e in node.args[0].value.elements]  # max([a, b])
        else:
            values = [a.value for a in node.args]
        if not any(self._on_device(v) for v in values):
            return None
        return "range" if node.func.value == "range" else "compare"

    def _on_device(self, expr: cst.BaseExpression) -> bool:
        """A tensor not certainly in host memory: reading it may wait for the device."""
        return self.analysis.kind(expr) is Kind.TENSOR and not certainly_on_host(
            self.analysis, expr) and not host_only(self.analysis, expr)

    def _text_of(self, node: cst.Call) -> cst.BaseExpression | None:
        """What ``str(x)``, ``repr(x)`` or ``format(x, spec)`` (the builtins) make text of."""
        if not isinstance(node.func, cst.Name) or node.func.value not in T.TEXT_BUILTINS or not (
                node.args) or node.args[0].keyword is not None or node.args[0].star:
            return None
        if f"builtins.{node.func.value}" not in self.md.qualified_names(node.func):
            return None
        return node.args[0].value

    def _element_read(self, node: cst.Call) -> tuple[str, str] | None:
        """``int(i)``, ``float(w)``, ``w.item()`` of an element ``i`` of a tensor being
        iterated whose kind the analysis does not know (see :func:`iterated_tensor`)."""
        func = node.func
        if isinstance(func, cst.Name) and func.value in ("int", "float", "bool") and len(
                node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            value = node.args[0].value
            if not self.md.qualified_names(func) & {f"builtins.{func.value}"}:
                return None
        elif isinstance(func, cst.Attribute) and func.attr.value == "item" and not node.args:
            value = func.value
        else:
            return None
        if not isinstance(value, cst.Name) or self.analysis.kind(value) is not Kind.UNKNOWN:
            return None
        return iterated_tensor(self.analysis, value)

    def _copy_of_unknown(self, node: cst.Call) -> str | None:
        """``x.cpu()`` / ``x.numpy()`` of a value of unknown kind in a torch module: these
        methods without arguments are a tensor's (numpy arrays have neither ``cpu`` nor
        ``numpy``)."""
        method = call_name(node)
        if method not in ("cpu", "numpy") or node.args or not isinstance(
                node.func, cst.Attribute) or self.analysis.torch_name() is None:
            return None
        receiver = node.func.value
        if self.analysis.kind(receiver) is not Kind.UNKNOWN or certainly_on_host(
                self.analysis, receiver) or self._module(receiver):
            return None
        if isinstance(receiver, cst.Call) and call_name(receiver) in ("cpu", "numpy", "detach"):
            inner = receiver.func.value if isinstance(receiver.func, cst.Attribute) else None
            if call_name(receiver) != "detach" or (
                    isinstance(inner, cst.Call) and call_name(inner) == "cpu"):
                return None  # only the first copy of `x.cpu().numpy()` counts
        return method

    def _module(self, expr: cst.BaseExpression) -> bool:
        """An nn.Module, maybe through its own chained methods (``net.eval().cpu()``)."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and (
                expr.func.attr.value in _MODULE_CHAIN):
            if expr.func.attr.value in ("eval", "train"):  # tensors have neither
                return True
            expr = expr.func.value
        if self.analysis.tensors.is_module(expr):
            return True
        # A name that is also called (`model(x)`) is a module (or a function), no tensor.
        scope = self.md.scope(expr) if isinstance(expr, cst.Name) else None
        if scope is None:
            return False
        return any(isinstance(self.md.parent(access.node), cst.Call)
                   and self.md.parent(access.node).func is access.node  # type: ignore
                   for access in scope.accesses[expr.value])

    def visit_If(self, node: cst.If) -> None:
        self._condition(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._condition(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._condition(node.test)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._condition(node.test)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        # `classes[pred]`: a list, tuple or string indexed by a tensor calls `pred.__index__()`
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return
        index = node.slice[0].slice.value
        if self._sequence(node.value) and self._on_device(index):
            self._site(node, "lookup")

    def _sequence(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr`` is certainly a list, a tuple or a string: a literal, a
        comprehension, or a name whose one binding is one (``classes = ("cat", "dog")``)."""
        if isinstance(expr, cst.Name):
            expr = sole_value(self.md, expr)  # type: ignore[assignment]
        return isinstance(expr, (cst.List, cst.Tuple, cst.ListComp, cst.SimpleString,
                                 cst.ConcatenatedString))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        assign = self.md.parent(node)
        if isinstance(assign, cst.Assign) and self._python_number(assign.value):
            # `x[mask] = 0`: index_put_ with one boolean mask and a Python number is
            # masked_fill_ (ATen's canDispatchToMaskedFill): no count, no wait, and Dynamo
            # traces it whole.
            return
        self._masked_store(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._masked_store(node.target)  # `x[mask] += 1` reads `x[mask]` first

    def _python_number(self, value: cst.BaseExpression) -> bool:
        """Whether ``value`` is certainly a Python number: a literal (signed, or arithmetic
        of literals), ``True``/``False``, ``float("inf")``, ``math.inf``, or the limits
        of ``torch.finfo``/``torch.iinfo``."""
        if numeric_type(value) is not None:  # a literal, float("inf"), math.inf
            return True
        if isinstance(value, cst.Name):
            return value.value in ("True", "False")
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator,
                                                                (cst.Minus, cst.Plus)):
            return self._python_number(value.expression)
        if isinstance(value, cst.BinaryOperation):
            return self._python_number(value.left) and self._python_number(value.right)
        if isinstance(value, cst.Call):
            return self.md.qualified_names(value.func) == {"builtins.float"} and len(
                value.args) == 1 and isinstance(value.args[0].value, cst.SimpleString)
        if isinstance(value, cst.Attribute):
            if isinstance(value.value, cst.Call) and value.attr.value in _INFO_LIMITS:
                return bool(self.md.qualified_names(value.value.func) & _NUMBER_INFO)
            return bool(self.md.qualified_names(value) & _NUMBER_CONSTANTS)
        return False

    def _masked_store(self, target: cst.BaseExpression) -> None:
        """``x[mask] = v``: ``index_put_`` with a boolean mask turns it into indices first."""
        if not isinstance(target, cst.Subscript) or len(target.slice) != 1:
            return
        index = target.slice[0].slice
        if not isinstance(index, cst.Index) or self.analysis.kind(target.value) is not (
                Kind.TENSOR) or self.analysis.kind(index.value) is not Kind.TENSOR:
            return
        if dtype_family(self.analysis, index.value) == "bool" or isinstance(
                index.value, cst.Comparison):
            self._site(target, "mask")

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        # `t and x`, `t or x`: the left operand is tested for truth (the right one is the
        # value of the expression); in a condition, `_condition` tests both.
        self._condition(node.left)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not):
            self._condition(node.expression)

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self._formatted(node.expression, spec=node.format_spec is not None, site=node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        # `"%.3f" % t`, `"%s, %s" % (a, t)`
        if isinstance(node.operator, cst.Modulo) and isinstance(
                node.left, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            values = [e.value for e in node.right.elements] if isinstance(
                node.right, cst.Tuple) else [node.right]
            for value in values:
                self._formatted(value, spec=True)

    def _formatted(self, value: cst.BaseExpression, spec: bool,
                   site: cst.CSTNode | None = None) -> None:
        """A value formatted into text: a read when it is a tensor (``Tensor.__format__``
        calls ``.item()`` on a one-element tensor). With a format spec (a number is
        expected) a reduction of a value of unknown kind in a torch module without an
        array library counts too: ``f"{x.abs().max():.1f}"``."""
        kind = self.analysis.kind(value)
        if spec and kind is Kind.UNKNOWN and isinstance(value, cst.Name):
            element = iterated_tensor(self.analysis, value)
            if element is not None:
                self._elements[id(site or value)] = element
                self._site(site or value, "element")
                return
        if kind is Kind.TENSOR or spec and kind is Kind.UNKNOWN and (
                isinstance(value, cst.Call) and call_name(value) in _REDUCTIONS
                and not value.args and isinstance(value.func, cst.Attribute)
                and self.analysis.tensors.unknown_read_rewritable(value.func.value)):
            if not (certainly_on_host(self.analysis, value) or host_only(self.analysis, value)):
                self._site(site or value, "format")  # (host_only: a sum of CPU tensors too)

    def _condition(self, test: cst.BaseExpression) -> None:
        # `a and b`: each operand is tested on its own.
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test = test.expression
        if isinstance(test, cst.BooleanOperation):
            self._condition(test.left)
            self._condition(test.right)
            return
        loaded = self._compared_with_loaded(test) if isinstance(test, cst.Comparison) and (
            id(test) not in self._seen and self.analysis.is_hot(test)) else None
        if loaded is not None:
            # not host-only: one operand may be on the device (see _compared_with_loaded)
            self._seen.add(id(test))
            self._loaded[id(test)] = loaded
            self.sites.append((test, "condition"))
        elif self.analysis.kind(test) is Kind.TENSOR:
            self._site(test, "condition")

    def _compared_with_loaded(self, test: cst.Comparison) -> tuple[str, str] | None:
        """``losses['val'] < best_val_loss`` (nanoGPT): one operand is certainly a tensor (a
        CPU one, so the comparison makes a tensor and the test reads it), and another is a
        name one of whose bindings comes from ``torch.load(..., map_location=device)``
        (``best_val_loss = checkpoint['best_val_loss']``), which puts the tensors it loads
        on that device: then the comparison runs there and the test waits for it. The
        operand's name and the binding's text, for the message; None otherwise."""
        operands = [test.left, *(c.comparator for c in test.comparisons)]
        if not any(certainly_on_host(self.analysis, o) for o in operands):
            return None
        for operand in operands:
            if isinstance(operand, cst.Name):
                binding = loaded_to_device(self.analysis, operand)
                if binding is not None:
                    return operand.value, binding
        return None

    def _inside(self, node: cst.CSTNode, reported: set[int]) -> bool:
        """Whether ``node`` lies in a node already reported (sites are expressions: only
        the statement that holds ``node`` can hold one; one walk up to it, not a walk per
        reported node, which was cubic on a long sum of reads)."""
        for ancestor in self.md.ancestors(node):
            if id(ancestor) in reported:
                return True
            if isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return False
        return False

    def visit_Comparison(self, node: cst.Comparison) -> None:
        # `x in t`: `Tensor.__contains__` computes `(t == x).any()` and reads it.
        if any(isinstance(c.operator, (cst.In, cst.NotIn)) and self._on_device(c.comparator)
               for c in node.comparisons):
            self._site(node, "contains")

    def _site(self, node: cst.CSTNode, how: str) -> None:
        if how == "condition" and host_only(self.analysis, node):
            return  # every tensor it tests is certainly in host memory: nothing to wait for
        if id(node) not in self._seen and self.analysis.is_hot(node):
            self._seen.add(id(node))
            self.sites.append((node, how))

    # -- reporting what no other rule reports ------------------------------------------------

    def leftovers(self, covered: Callable[[cst.CSTNode], bool]) -> None:
        """Report the reads that ``covered`` (the engine's answer: does another rule report
        this node?) says are nobody's."""
        reported: set[int] = set()
        for node, how in self.sites:
            if covered(node) or self._inside(node, reported):
                continue
            reported.add(id(node))
            where = self.analysis.hot.reason(node) or "on a hot path"
            cost = ("the host waits for the device, and torch.compile breaks the graph"
                    if how in _BREAKS else "the host waits for the device")
            test = self._test_reading_the_same(node)
            if test is not None:
                cost = (f"`if {short(test, 40)}:` has just waited for the same value, so this "
                        "second read waits for little, but it still copies it again"
                        + (" and breaks the graph" if how in _BREAKS else ""))
            what = _WHAT[how]
            if id(node) in self._on_host:
                what = _WHAT_ON_HOST[how]
                cost = "the host waits for nothing, but torch.compile breaks the graph"
            if id(node) in self._uncertain and isinstance(node, cst.Call) and isinstance(
                    node.func, cst.Attribute):
                what += (f" (if `{short(node.func.value, 30)}` is a tensor; numpy values "
                         f"have `.{how}()` too)")
            why = ("read the number once before the `if` and use it in both places"
                   if test is not None else self._why(node, how))
            if id(node) in self._elements:
                iterated, evidence = self._elements[id(node)]
                verb = "converts" if isinstance(node, cst.Call) and isinstance(
                    node.func, cst.Name) else "reads" if isinstance(node, cst.Call) else (
                    "formats")
                self.report(node, (
                    f"`{short(node)}` {verb} an element of `{iterated}` {where}, one read "
                    f"per element: {evidence}, and iterating a tensor yields 0-dim "
                    f"tensors; each {_NOUN[verb]} waits for the device, and torch.compile "
                    f"breaks "
                    f"the graph. No fix is offered: read it once before the loop, "
                    f"`{iterated}.tolist()`, and iterate the list"))
                continue
            if id(node) in self._loaded:
                name, binding = self._loaded[id(node)]
                what = (f"compares a tensor with `{name}`, which may hold a tensor loaded "
                        f"onto the device (`{binding}`)")
                why = (f"when `{name}` comes from that load, the comparison runs on the "
                       f"device; convert it to a number where it is loaded "
                       f"(`float(...)`), or keep it on the host")
            self.report(node, f"`{short(node)}` {what} {where}: {cost}. No fix is "
                              f"offered: {why}")

    def _test_reading_the_same(self, node: cst.CSTNode) -> cst.BaseExpression | None:
        """The test of an enclosing ``if`` that reads the same tensor as the read ``node``
        (``if val_loss.item() < best: best = val_loss.item()``), if there is one."""
        read = self.analysis.host_read(node)
        if read is None:
            return None
        text = self.md.code(read.tensor)
        previous = node
        for ancestor in self.md.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.For, cst.While)):
                return None
            if isinstance(ancestor, cst.If) and previous is not ancestor.test:
                for candidate in _calls_in(ancestor.test):
                    found = self.analysis.host_read(candidate)
                    if found is not None and self.md.code(found.tensor) == text:
                        return ancestor.test
            previous = ancestor
        return None

    def _why(self, node: cst.CSTNode, how: str) -> str:
        """Why no rule offers a fix, from how the read's value is used."""
        if how == "mask":
            return ("no rule rewrites assignments through a mask yet; "
                    "`x.masked_fill_(mask, value)` (a scalar value) or "
                    "`x.copy_(torch.where(mask, value, x))` keeps the shape and does not wait")
        if how == "condition":
            return ("the test decides which code runs, in a form no rule can rewrite; "
                    "compute both results and select with torch.where, or test on the host")
        if how == "compare":
            return ("keep the extreme a tensor with `torch.maximum(a, b)` / `torch.minimum(a, "
                    "b)` (or `t.max()` / `t.min()` of one tensor), and read it once where the "
                    "host needs it")
        if how == "elements":
            return ("reduce on the device with the tensor's own `t.any()` / `t.all()`, "
                    "and read that one value where the host needs it")
        if how == "contains":
            return ("keep the test a tensor, `(t == x).any()` (`torch.isin(x, t)` for "
                    "several values), and read it where the host needs it")
        if how == "lookup":
            return ("keep the sequence's values in a tensor and index it on the device, or "
                    "read the indices once (`.tolist()`) where the host needs them")
        if how == "range":
            return ("loop to a bound known on the host and mask the steps past the count, or "
                    "read the count once, before the loop that needs it")
        md = self.md
        child: cst.CSTNode = node
        parent = md.parent(node)
        text = False  # the value is made into text on its way
        while parent is not None and _passes_value_on(md, child, parent):
            child, parent = parent, md.parent(parent)
            text = text or _makes_text(child)
        if text and isinstance(parent, (cst.AugAssign, cst.Assign)):
            target = parent.target if isinstance(parent, cst.AugAssign) else (
                parent.targets[0].target)
            return (f"it is made into text (`{short(target, 30)}`), which no rule defers; "
                    "read it less often, or make the text only where it is needed")
        if isinstance(parent, cst.Expr):
            return "the value is never used; delete the read"
        if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and child is parent.test:
            return ("the test decides which code runs, in a form no rule can rewrite; "
                    "compute both results and select with torch.where, or test less often")
        if isinstance(parent, cst.Arg):
            call = md.parent(parent)
            if isinstance(call, cst.Call):
                name = dotted_name(call.func) or call_name(call) or short(call.func, 30)
                return (f"it is passed to `{name}(...)`, which nosync-fix does not know how to "
                        "defer or keep on the device; pass the tensor, or read it less often")
        if isinstance(parent, cst.AugAssign):
            return (f"it is accumulated on the host (`{short(parent.target, 30)}`), in a form "
                    "NSY201 cannot prove it may move to the device; accumulate a detached "
                    "tensor and read it once")
        if isinstance(parent, cst.Return):
            return ("it is returned, so the caller gets a Python value; return the tensor "
                    "and read it where the host needs it")
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(
                parent.targets[0].target, cst.Name):
            target = parent.targets[0].target
            if not self._used(target):
                return f"`{target.value}` is never used; delete the read"
            return (f"`{target.value}` is used as a Python value in code no rule rewrites; "
                    "keep it a tensor where it is used, or read it less often")
        return ("no rule recognises how the value is used; keep it a tensor, or read it "
                "less often")

    def _used(self, name: cst.Name) -> bool:
        scope = self.md.scope(name)
        if scope is None:
            return True
        for assignment in scope.assignments[name.value]:
            if getattr(assignment, "node", None) is name:
                return bool(getattr(assignment, "references", True))
        return True
