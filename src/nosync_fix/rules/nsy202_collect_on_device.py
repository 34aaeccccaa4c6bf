"""NSY202 collect-on-device."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata.scope_provider import Assignment, Scope

from ..analysis import Kind
from ..analysis.base import visit
from ..prefilter import Signal
from ..rewrite import Rewrite
from ._deferred import RuntimeNames
from ._device import is_fresh
from ._helpers import detached, method_call, short, statement
from ._hoist import exception_exposure, runs_inline
from ._host import certainly_on_host
from ._scalars import is_scalar_shaped
from .base import Rule

#: Builtins and library roots that read a list without keeping a reference to it.
_NON_RETAINING_BUILTINS = frozenset({
    "len", "sum", "min", "max", "sorted", "list", "tuple", "set", "frozenset", "any", "all",
    "print", "str", "repr", "enumerate", "zip", "reversed", "iter", "map", "filter", "format",
    "isinstance", "dict", "bool",
})
_NON_RETAINING_ROOTS = frozenset({"numpy", "torch", "json", "statistics", "math", "pickle"})
#: Libraries whose tensors also have `.cpu()` and `.numpy()`.
_OTHER_TENSOR_LIBRARIES = frozenset({"tensorflow", "keras", "jax", "paddle", "mindspore"})


@dataclass(frozen=True)
class _Collect:
    """One append in the loop that moves a device value to the host."""

    #: The statement-level node to replace: the append/extend call or the `+=` statement.
    node: cst.CSTNode
    #: The tensor that is read.
    tensor: cst.BaseExpression
    #: "item", "float", "int", "tolist", "extend", "numpy" or "cpu".
    form: str
    #: The receiver is certainly a tensor, and the conversion exact.
    certain: bool
    #: For `ppl.append(math.exp(loss.item()))`: the host expression applied after the
    #: loop to each converted value, with the read replaced by the name `_READ`.
    apply: str | None = None


@dataclass
class _Plan:
    rewrite: Rewrite | None
    why_not: str = ""
    collects: list[_Collect] = field(default_factory=list)
    #: The advice to collect on the device is itself wrong for this list (the loop reads
    #: the value on the host anyway, or the tensors are large): the finding says only why
    #: the line is left as it is.
    left_alone: bool = False


class CollectOnDevice(Rule):
    """
    ## What it does
    Finds lists filled with host copies of device values in a loop —
    `losses.append(loss.item())`, `losses.append(float(loss))`,
    `preds.extend(out.argmax(1).tolist())`, `preds += out.argmax(1).tolist()`,
    `outputs.append(out.cpu().numpy())`, `outputs.append(out.detach().cpu())` —
    and appends the detached device tensors instead (for `.cpu()` and `.numpy()`
    copies: of 0-dim tensors only; see Fix safety). After the loop the list is
    converted once into exactly the Python objects the original built: a list
    of floats (or ints, or bools, as `.item()` gives them), a flat list of
    numbers, a list of numpy arrays, a list of CPU tensors.

    ## Why is this slow?
    Every `.item()`, `.tolist()`, `.cpu()` or `.numpy()` copies to the host and
    makes it wait for all queued device work, every step. Appending the tensor
    itself queues nothing and waits for nothing. After the loop, the tensors are
    joined with one `torch.cat` and copied with one transfer.

    ## Example
    ```python
    import torch

    losses = []
    for step in range(3):
        loss = torch.tensor(0.5) * step
        losses.append(loss.item())
    print(losses)
    ```

    ## Use instead
    ```python
    import torch
    from nosync_fix.runtime import to_host

    losses = []
    for step in range(3):
        loss = torch.tensor(0.5) * step
        losses.append(loss.detach())
    losses = to_host(losses, "item")
    print(losses)
    ```

    ## Fix safety
    The conversion, `nosync_fix.runtime.to_host(list, how)` with `how` the
    original's conversion (`"item"`, `"float"`, `"int"`, `"tolist"`, `"extend"`
    for `.extend(t.tolist())`, `"numpy"`, `"cpu"`), builds the same objects as
    the original: it joins the tensors with one `torch.cat` and one transfer
    when every element is a plain tensor and they share a dtype and device (and,
    for `.tolist()`, `.numpy()` and `.cpu()` of whole tensors, their shape after
    the first dimension, as batches of per-sample outputs do, the last smaller
    batch included); otherwise it converts each tensor on its own, still after
    the loop. A loop that runs zero times leaves the list as it was; elements
    that were in the list before the loop are kept as they were (the fix
    records where the loop's elements start and converts `list[start:]`). Host
    values appended in the same loop stay as they are (the tensors are then
    converted one by one). The fixed code needs `nosync_fix` installed where it
    runs.

    A tensor that may change later or that is a view of a larger one (`out[0]`,
    a parameter) is appended as `.detach().clone()`, so that the list keeps the
    value of that step and not the whole base tensor.

    The fix is refused when the list is read in the loop (other than `len()`),
    comes from outside the function, or could be seen by other code before the
    conversion: stored elsewhere before the loop, or read after an `except`
    that can stop the loop midway.

    In a Jupyter notebook, a fix that converts the list after a loop at a cell's top
    level (or a slice of a list that outlives the function) is unsafe: stopping a loop is
    routine there and the kernel keeps its variables, so after an interrupt the
    conversion never runs and tensors are left where the original left numbers.

    A `math` function of a read (`ppl.append(math.exp(loss.item()))`, or any
    expression of one read, number literals, arithmetic and `math` functions)
    collects the tensor and applies the same expression to each converted value
    after the loop: `ppl = [math.exp(x) for x in to_host(ppl, "item")]`, the
    same Python arithmetic on the same numbers. That fix is unsafe: an error the
    function raises (`math.exp` overflowing, `math.log` of 0) comes after the
    loop, not at the step that made it. A list that also gets host values is
    reported instead (the expression must not apply to them).

    Left alone (reported with the reason, no fix) when the loop reads the
    collected value on the host anyway: the same variable is read (`.item()`,
    `int()`, `bool()`, `.tolist()`, a comparison or its truth) in the test of an
    `if` or `while` in the loop, as a generation loop's stop test reads the token
    it appends, on this pass or the next. Every iteration then waits for that
    value, and a device copy per step plus a transfer after the loop only adds
    work. A test that runs only every N steps (under `if step % N == 0:`) does not
    count: the other steps no longer wait.

    `.cpu()`, `.to("cpu")` and `.numpy()` copies are collected only for tensors
    known to be 0-dim (a loss, a full reduction such as `out.sum()`); whole
    tensors (logits, features, decoded images) are reported instead, with no
    fix: kept on the device until the loop ends they would hold the whole loop's
    outputs in device memory, where the original freed each step's device copy,
    and a long evaluation loop could run out of memory. The finding suggests a
    non-blocking copy (`.to("cpu", non_blocking=True)`, synchronized once before
    the list is read) or moving the tensors to the host in chunks.

    Safe when the value is certainly a tensor and what is collected is a Python
    number or list (`.item()`, `float()`, `.tolist()`). Unsafe when it is only
    likely to be a tensor, and always for `.cpu()` and `.numpy()` of 0-dim
    tensors. `.cpu()` without `.detach()` differs too:
    the original list holds tensors that may require grad, the fixed one holds
    detached tensors. On the CPU,
    `.cpu()` and `.numpy()` return the tensor's own memory, so later in-place
    changes to it show in the original list; the fixed list holds copies, as it
    does on an accelerator, where `.cpu()` copies too.

    ## When not to apply
    The tensors stay on the device until the loop ends: one small tensor per
    step for `.item()`, a row of numbers per step for `.tolist()`. For loops of
    millions of steps, or `.tolist()` of large outputs, convert in chunks every
    N steps instead.
    """

    code = "NSY202"
    name = "collect-on-device"
    summary = ("Host copies (`.item()`, `.tolist()`, `.cpu()`) appended to a list in a loop: "
               "collect tensors, convert once")
    fix_kind = "safe/unsafe"
    cost = "sync and graph break"
    triggers = (".item(", ".tolist(", ".cpu(", ".numpy(", ".to(", "float(", "int(")
    signals = Signal.READ | Signal.ACCUMULATE

    def __init__(self, context) -> None:  # type: ignore[no-untyped-def]
        super().__init__(context)
        self._plans: dict[tuple[int, str, int], _Plan] = {}
        self._runtime: RuntimeNames | None = None

    def _runtime_names(self) -> RuntimeNames:
        if self._runtime is None:
            self._runtime = RuntimeNames(self.analysis)
        return self._runtime

    # -- visiting ----------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("append", "extend"):
            return
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return
        collect = self._collect(node, func.attr.value, node.args[0].value)
        if collect is not None:
            self._candidate(collect, func.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign):
            collect = self._collect(node, "extend", node.value)
            if collect is not None:
                self._candidate(collect, node.target)

    def _collect(self, node: cst.CSTNode, method: str,
                 value: cst.BaseExpression) -> _Collect | None:
        """The collect that appending ``value`` with ``method`` is, if any."""
        read = self.analysis.host_read(value)
        if read is not None and certainly_on_host(self.analysis, read.tensor):
            return None  # `v.item()` of a CPU tensor waits for nothing
        if method == "extend":
            if read is not None and read.how == "tolist":
                return _Collect(node, read.tensor, "extend", read.certain)
            return None
        if read is not None and read.how in ("item", "float", "int", "tolist"):
            return _Collect(node, read.tensor, read.how, read.certain)
        if read is None and method == "append":
            applied = self._host_function_of_read(node, value)
            if applied is not None:
                return applied
        return self._transfer(node, value)

    def _host_function_of_read(self, node: cst.CSTNode,
                               value: cst.BaseExpression) -> _Collect | None:
        """`math.exp(loss.item())`, `10 * math.log10(1 / mse.item())`: one scalar read
        under `math` functions, arithmetic and number literals only, so that the same
        expression gives the same value when applied to the converted read after the
        loop (nothing else in it can change in between)."""
        finder = _HostFunctionOfRead(self)
        visit(value, finder)
        if not finder.ok or len(finder.reads) != 1 or not finder.functions:
            return None
        read = finder.reads[0]
        if read.how not in ("item", "float", "int") or certainly_on_host(self.analysis,
                                                                         read.tensor):
            return None
        template = value.deep_replace(read.node, cst.Name(_READ))
        return _Collect(node, read.tensor, read.how, read.certain,
                        cst.Module([]).code_for_node(template))

    def _transfer(self, node: cst.CSTNode, value: cst.BaseExpression) -> _Collect | None:
        """``t.cpu().numpy()``, ``t.detach().cpu()`` and the like."""
        steps: list[str] = []
        current = value
        while True:
            if isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and (
                current.func.attr.value in ("cpu", "detach", "numpy") and not current.args
                or current.func.attr.value == "to" and _to_cpu(current)
            ):
                steps.append("cpu" if current.func.attr.value == "to" else current.func.attr.value)
                current = current.func.value
            elif isinstance(current, cst.Attribute) and current.attr.value == "data":
                steps.append("detach")
                current = current.value
            else:
                break
        steps.reverse()  # in the order they run
        if "cpu" not in steps or steps.count("numpy") > 1 or (
            "numpy" in steps and steps[-1] != "numpy"
        ):
            return None
        kind = self.analysis.kind(current)
        if kind is Kind.HOST:
            return None
        # Only a torch tensor has both `.detach()` (or `.cpu()`) and `.numpy()`, unless
        # another library with such tensors (TensorFlow) is imported.
        certain = kind is Kind.TENSOR or (
            ("detach" in steps or "numpy" in steps)
            and not self.analysis.tensors._imports & _OTHER_TENSOR_LIBRARIES
        )
        if "numpy" in steps:
            return _Collect(node, current, "numpy", certain)
        # `.cpu()` of a tensor that requires grad keeps it; the fix appends detached copies.
        return _Collect(node, current, "cpu", certain and "detach" in steps)

    def _candidate(self, collect: _Collect, receiver: cst.BaseExpression) -> None:
        loop = self.analysis.loops.enclosing_loop(collect.node)
        if loop is None:
            return
        copies = (f"`{short(collect.node)}` copies a device value to the host "
                  f"{self.analysis.loops.every_step(collect.node)}")
        message = f"{copies}; collect the tensors and convert once after the loop"
        # This collect's own reason to be left alone comes first: other reasons for no fix
        # (the list is read in the loop) would come with advice that does not fit it.
        own = self._read_again([collect], loop) or self._large([collect])
        if own is not None:
            self.report(collect.node, f"{copies}; left as it is: {own}")
            return
        if not isinstance(receiver, cst.Name):
            self.report(collect.node, message + " (no automatic fix: the list is not a local "
                                                "variable)")
            return
        plan = self._plan(receiver, loop)
        if plan.left_alone:
            message = f"{copies}; left as it is: {plan.why_not}"
        elif plan.rewrite is None:
            message += f" (no automatic fix: {plan.why_not})"
        self.report(collect.node, message, plan.rewrite)

    # -- planning ----------------------------------------------------------------------------

    def _plan(self, receiver: cst.Name, loop: cst.For | cst.While) -> _Plan:
        scope = self.md.scope(receiver)
        key = (id(scope), receiver.value, id(loop))
        if key not in self._plans:
            self._plans[key] = self._make_plan(receiver.value, scope, loop)
        return self._plans[key]

    def _make_plan(self, name: str, scope: Scope | None, loop: cst.For | cst.While) -> _Plan:
        if scope is None:
            return _Plan(None, "cannot resolve the list's scope")
        assignments = list(scope.assignments[name])
        if not assignments or not all(isinstance(a, Assignment) and isinstance(a.node, cst.Name)
                                      for a in assignments):
            return _Plan(None, f"`{name}` is not a list made in this function")
        references = sorted({id(r): r for a in assignments for r in a.references}.values(),
                            key=lambda r: self.analysis.md.source_order(r.node))
        uses: list[tuple[cst.CSTNode, _Collect | str | None]] = []
        for access in references:
            if access.scope is not scope and not runs_inline(access.scope, scope):
                return _Plan(None, f"`{name}` is used in a nested function")
            if self.md.is_ancestor(loop, access.node):
                uses.append((access.node, self._use_in_loop(access.node)))
        for assignment in assignments:  # `name += ...` binds the name; it is no access
            augmented = self.md.parent(assignment.node)
            if isinstance(augmented, cst.AugAssign) and self.md.is_ancestor(loop, augmented):
                uses.append((augmented, self._append_kind(augmented, "extend", augmented.value)))
        collects: list[_Collect] = []
        host_appends = False
        for use, found in uses:
            if not self.md.is_ancestor(loop.body, use):
                return _Plan(None, f"`{name}` is read in the loop header or `else:`")
            if found is None:
                return _Plan(None, f"`{name}` is read inside the loop")
            if found == "host":
                host_appends = True  # kept as they are: `to_host` converts only tensors
            elif isinstance(found, _Collect):
                if self.analysis.loops.enclosing_loop(found.node) is not loop:
                    return _Plan(None, f"`{name}` is filled in nested loops")
                collects.append(found)
        if not collects:
            return _Plan(None, "nothing to collect")
        why_not = self._read_again(collects, loop) or self._large(collects)
        if why_not is not None:
            return _Plan(None, why_not, left_alone=True)
        forms = {c.form for c in collects}
        if len(forms) != 1:
            return _Plan(None, f"`{name}` is filled with different kinds of values")
        form = forms.pop()
        applies = {c.apply for c in collects}
        if len(applies) != 1:
            return _Plan(None, f"`{name}` is filled with different expressions of device "
                               "values")
        apply = applies.pop()
        if apply is not None and host_appends:
            return _Plan(None, f"`{name}` also gets host values, to which the expression "
                               f"`{apply.replace(_READ, '...')}` must not be applied")
        why_not, fresh = self._origin(name, assignments, loop)
        if why_not is not None:
            return _Plan(None, why_not)
        why_not = self._escape(name, references, loop, fresh)
        if why_not is None:
            why_not = exception_exposure(self.md, name, [r.node for r in references], loop)
        if why_not is not None:
            return _Plan(None, why_not)

        rewrite = Rewrite(f"Collect device tensors in `{name}`; convert them once after the "
                          "loop")
        # `.cpu()` / `.numpy()` of 0-dim tensors only (`_large`): whole tensors kept on the
        # device until the loop ends could hold a whole epoch of outputs there.
        if apply is not None:
            # The host function now runs after the loop: an error it raises (`math.exp`
            # overflows, `math.log(0)`) comes after the loop's other work, not at its step.
            rewrite = Rewrite(f"Collect device tensors in `{name}`; convert them once after "
                              f"the loop and apply `{apply.replace(_READ, '...')}` there "
                              "(unsafe: an error it raises comes after the loop, not at its "
                              "step)").unsafe()
        if not all(c.certain for c in collects) or any(
            c.form in ("cpu", "numpy") for c in collects
        ):
            rewrite = rewrite.unsafe()
        for collect in collects:
            rewrite = rewrite.replace(collect.node, self._appended(collect, name, loop))
        start = None
        if fresh is None or self._filled_before(name, fresh, loop, references, assignments):
            start = _fresh_name(scope, f"{name}_start")
            rewrite = rewrite.insert_before(loop, [statement(f"{start} = len({name})")])
        # The guards that make one `torch.cat` exact (same dtype, device, trailing shape;
        # host values left alone) live in the runtime, so the fixed code reads plainly.
        names = self._runtime_names()
        target = name if start is None else f"{name}[{start}:]"
        call = names.call("to_host", cst.parse_expression(target),
                          cst.SimpleString(f'"{form}"'))
        converted = cst.Module([]).code_for_node(call)
        if apply is not None:
            taken = {n.value for n in _names(cst.parse_expression(apply))} | {name}
            element = next(v for v in ("x", "v", "value", "x_") if v not in taken)
            each = apply.replace(_READ, element)
            converted = f"[{each} for {element} in {converted}]"
        code = f"{target} = {converted}"
        rewrite = names.imports(rewrite, {"to_host"})
        rewrite = rewrite.insert_after(loop, [statement(code)])
        return _Plan(rewrite, collects=collects)

    def _read_again(self, collects: list[_Collect], loop: cst.For | cst.While) -> str | None:
        """Why collecting saves nothing: a collected tensor's name is read on the host by
        the test of an `if` or `while` in the same loop (`if token.item() in stop: break`
        before `tokens.append(token.item())`, that pass's or the next one's value), so every
        iteration still waits for that value; keeping a device copy of it only adds work."""
        names = {n for c in collects for n in self._tensor_names(c.tensor)}
        if not names:
            return None
        memo = self.analysis.memo("nsy202.loop_tests")
        if id(loop) not in memo:
            # Each test once per loop, with the names it mentions: a candidate's names are
            # looked for only in the tests that mention one (a walk of every test for every
            # collection of a long loop made the rule quadratic). A test run every N steps
            # is left out: collecting saves the other steps' waits.
            memo[id(loop)] = [(test, _mentioned(test)) for test in _tests(loop)
                              if not self.analysis.loops.periodic(test)]
        for test, mentioned in memo[id(loop)]:  # type: ignore[union-attr]
            if mentioned.isdisjoint(names):
                continue
            found = self._host_use_of(test, names)
            if found is not None:
                line = self.md.position(test)[0]
                return (f"`{found}` is read on the host again in this loop (line {line}: "
                        f"`{short(test)}`), so every iteration waits for it anyway; collecting "
                        "it on the device would save nothing")
        return None

    def _tensor_names(self, tensor: cst.BaseExpression) -> set[str]:
        """The variables a collected tensor expression is made from (not modules, not
        attribute or method names)."""
        found: set[str] = set()
        analysis = self.analysis

        class Names(cst.CSTVisitor):
            def visit_Attribute(self, node: cst.Attribute) -> bool:
                node.value.visit(self)
                return False

            def visit_Arg(self, node: cst.Arg) -> bool:
                node.value.visit(self)
                return False

            def visit_Name(self, node: cst.Name) -> None:
                if analysis.kind(node) is not Kind.HOST:
                    found.add(node.value)

        tensor.visit(Names())
        return found

    def _host_use_of(self, test: cst.BaseExpression, names: set[str]) -> str | None:
        """The name of ``names`` that ``test`` reads on the host, if any: in a read
        (`.item()`, `int()`, `bool()`, `.tolist()`), compared (other than by `is`), or
        tested for truth itself."""
        rule = self

        class Finder(cst.CSTVisitor):
            def __init__(self) -> None:
                self.found: str | None = None

            def on_visit(self, node: cst.CSTNode) -> bool:
                if self.found is not None or isinstance(node, cst.Lambda):
                    return False
                read = rule.analysis.host_read(node)
                tensor = read.tensor if read is not None else _read_like(node)
                if tensor is not None:
                    hit = rule._tensor_names(tensor) & names
                    if hit:
                        self.found = sorted(hit)[0]
                        return False
                if isinstance(node, cst.Comparison):
                    operands = [node.left] + [t.comparator for t in node.comparisons]
                    if not all(isinstance(t.operator, (cst.Is, cst.IsNot))
                               for t in node.comparisons):
                        self.found = _operand_name(operands, names)
                        if self.found is not None:
                            return False
                return True

        if isinstance(test, cst.Name) and test.value in names:
            return test.value
        finder = Finder()
        for part in _truth_operands(test):
            if isinstance(part, cst.Name) and part.value in names:
                return part.value
            visit(part, finder)
            if finder.found is not None:
                return finder.found
        return None

    def _large(self, collects: list[_Collect]) -> str | None:
        """Why whole tensors copied with `.cpu()`, `.to("cpu")` or `.numpy()` must not be
        kept on the device: not known to be small (0-dim), they may be a batch's logits,
        features or images, and the loop's whole output would then sit in device memory
        until the loop ends where the original freed each step's device copy."""
        for c in collects:
            if c.form in ("cpu", "numpy") and not is_scalar_shaped(self.analysis, c.tensor):
                return (f"`{short(c.tensor, 40)}` is not known to be small (0-dim), and "
                        "collecting it on the device would hold every step's tensor in device "
                        "memory until the loop ends (the original "
                        "frees each step's device copy), which can run out of memory on a "
                        "long loop; to stop waiting on each copy, copy with "
                        "`.to(\"cpu\", non_blocking=True)` and synchronize once before the "
                        "list is read, or move the tensors to the host in chunks every N steps")
        return None

    def _use_in_loop(self, use: cst.CSTNode) -> _Collect | str | None:
        """What a reference to the list inside the loop does: a collect, "len", a "host"
        append, or None (a read that the fix cannot allow)."""
        parent = self.md.parent(use)
        if isinstance(parent, cst.Arg):
            call = self.md.parent(parent)
            if isinstance(call, cst.Call) and len(call.args) == 1 and (
                "builtins.len" in self.md.qualified_names(call.func)
            ):
                return "len"
            return None
        if isinstance(parent, cst.Attribute) and parent.value is use:
            call = self.md.parent(parent)
            if isinstance(call, cst.Call) and call.func is parent and parent.attr.value in (
                "append", "extend"
            ) and len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
                return self._append_kind(call, parent.attr.value, call.args[0].value)
        return None

    def _append_kind(self, node: cst.CSTNode, method: str,
                     value: cst.BaseExpression) -> _Collect | str | None:
        """A collect, "host" for host values (which stay as they are), or None."""
        collect = self._collect(node, method, value)
        if collect is not None:
            return collect
        if method == "append":
            return "host" if self.analysis.kind(value) is Kind.HOST else None
        if isinstance(value, (cst.List, cst.Tuple)) and all(
            not isinstance(e, cst.StarredElement) and self.analysis.kind(e.value) is Kind.HOST
            for e in value.elements
        ):
            return "host"
        return None  # the elements of another iterable may be tensors

    def _origin(self, name: str, assignments: list, loop: cst.For | cst.While,  # type: ignore[type-arg]
                ) -> tuple[str | None, cst.BaseStatement | None]:
        """Check that the list is made in this function; return (reason to refuse, the
        statement ``name = [...]`` that makes a new list for every run of the loop: the
        nearest binding before the loop in the same block)."""
        md = self.md
        outer_loops = self.analysis.loops.enclosing_loops(loop)
        for assignment in assignments:
            target = assignment.node
            parent = md.parent(target)
            if isinstance(parent, cst.AugAssign):
                continue  # checked with the uses
            if md.is_ancestor(loop, target):
                return f"`{name}` is rebound inside the loop", None
            if _new_list(parent, md) is not None:
                continue
            if isinstance(parent, cst.AssignTarget) and md.position(target)[0] > (
                md.position(loop)[2]
            ) and not any(md.is_ancestor(outer, target) for outer in outer_loops):
                continue  # rebound after the loop: `preds = np.concatenate(preds)`
            return f"`{name}` is not only bound to new lists in this function", None
        block = md.parent(loop)
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            return None, None
        body = list(block.body)
        targets = [a.node for a in assignments]
        for earlier in reversed(body[: body.index(loop)]):
            for target in targets:
                if md.statement_of(target) is earlier and _new_list(md.parent(target), md) \
                        is not None:
                    return None, earlier
        return None, None

    def _filled_before(self, name: str, binding: cst.BaseStatement, loop: cst.CSTNode,
                       references, assignments) -> bool:  # type: ignore[no-untyped-def]
        """Whether the list may hold elements when the loop starts (so the conversion must
        leave them alone)."""
        md = self.md
        target = next(a.node for a in assignments if md.statement_of(a.node) is binding)
        if _new_list(md.parent(target), md):
            return True  # `name = [1.0, 2.0]`
        first, last = md.position(binding)[2], md.position(loop)[0]
        return any(first < md.position(node)[0] < last
                   for node in [r.node for r in references] + [a.node for a in assignments])

    def _escape(self, name: str, references, loop: cst.For | cst.While,  # type: ignore[no-untyped-def]
                fresh_binding: cst.CSTNode | None) -> str | None:
        """Why other code could see the list while it holds tensors, or None."""
        md = self.md
        outer_loops = self.analysis.loops.enclosing_loops(loop)
        loop_start = md.position(loop)[0]
        for access in references:
            use = access.node
            if md.is_ancestor(loop, use) or not self._escapes(use):
                continue
            line = md.position(use)[0]
            if fresh_binding is not None:
                if md.position(fresh_binding)[0] <= line < loop_start:
                    return f"`{name}` is handed to other code before the loop"
                continue
            if line < loop_start or any(md.is_ancestor(outer, use) for outer in outer_loops):
                return f"`{name}` is handed to other code that may read it during the loop"
        return None

    def _escapes(self, use: cst.CSTNode) -> bool:
        """Whether this reference may hand the list object to code that keeps it."""
        md = self.md
        parent = md.parent(use)
        if isinstance(parent, cst.Attribute) and parent.value is use:
            return False
        if isinstance(parent, cst.Subscript) and parent.value is use:
            return False
        if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is use:
            return False
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.BinaryOperation,
                               cst.FormattedStringExpression, cst.Del)):
            return False
        if isinstance(parent, cst.AugAssign):
            return False
        if isinstance(parent, cst.Arg):
            call = md.parent(parent)
            if not isinstance(call, cst.Call):
                return True
            for q in md.qualified_names(call.func):
                root, _, rest = q.partition(".")
                if root == "builtins" and rest in _NON_RETAINING_BUILTINS:
                    return False
                if root in _NON_RETAINING_ROOTS:
                    return False
            return True
        return True

    def _appended(self, collect: _Collect, name: str,
                  loop: cst.For | cst.While) -> cst.CSTNode:
        """The statement-level node that appends the detached tensor."""
        kept = detached(collect.tensor)
        if not is_fresh(self.analysis, collect.tensor, collect.node, loop):
            kept = method_call(kept, "clone")
        call = method_call(cst.Name(name), "append", kept)
        if isinstance(collect.node, cst.AugAssign):
            return cst.Expr(call)
        return call


#: Stands for the read in a collect's `apply` template (not a valid user name: `$`-free
#: but reserved-looking, and replaced before any code is written).
_READ = "__nosync_read__"


class _HostFunctionOfRead(cst.CSTVisitor):
    """Accepts an expression made only of scalar reads, number literals, arithmetic and
    calls of `math` functions with positional arguments; collects the reads."""

    _OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide,
                  cst.Modulo, cst.Power)

    def __init__(self, rule: CollectOnDevice) -> None:
        self.rule = rule
        self.reads: list = []  # type: ignore[type-arg]
        self.functions = 0
        self.ok = True

    def on_visit(self, node: cst.CSTNode) -> bool:
        if not self.ok:
            return False
        if isinstance(node, (cst.LeftParen, cst.RightParen, cst.BaseParenthesizableWhitespace,
                             cst.Comma, cst.Integer, cst.Float)):
            return False
        if isinstance(node, cst.Call):
            read = self.rule.analysis.host_read(node)
            if read is not None:
                self.reads.append(read)
                return False
            if all(a.keyword is None and not a.star for a in node.args) and any(
                    q.startswith("math.") and q.count(".") == 1
                    for q in self.rule.md.qualified_names(node.func)):
                self.functions += 1
                for arg in node.args:
                    visit(arg.value, self)
                return False
            self.ok = False
            return False
        if isinstance(node, cst.BinaryOperation):
            self.ok = isinstance(node.operator, self._OPERATORS)
            return self.ok
        if isinstance(node, cst.UnaryOperation):
            self.ok = isinstance(node.operator, (cst.Minus, cst.Plus))
            return self.ok
        if isinstance(node, (cst.BaseBinaryOp, cst.BaseUnaryOp)):
            return False
        self.ok = False
        return False


def _names(expr: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.append(node)

    expr.visit(Names())
    return found


def _mentioned(expr: cst.BaseExpression) -> frozenset[str]:
    """Every name an expression mentions."""
    return frozenset(name.value for name in _names(expr))


def _tests(loop: cst.For | cst.While) -> list[cst.BaseExpression]:
    """The tests of the `if`, `elif` and `while` statements of a loop (its own `while`
    test included), outside functions and classes defined in it."""
    found: list[cst.BaseExpression] = []

    class Tests(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            found.append(node.test)

        def visit_While(self, node: cst.While) -> None:
            found.append(node.test)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

    loop.visit(Tests())
    return found


def _read_like(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The receiver of what reads like a host read whatever its type is known to be:
    `x.item()`, `x.tolist()`, `int(x)`, `float(x)`, `bool(x)` (a loop test that may read
    the collected value is enough to leave the collection alone)."""
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("item", "tolist") and (
            not node.args):
        return func.value
    if isinstance(func, cst.Name) and func.value in ("int", "float", "bool") and len(
            node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
        return node.args[0].value
    return None


def _truth_operands(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The parts of a test whose truth Python asks for: `a and not b` gives a and b."""
    if isinstance(test, cst.BooleanOperation):
        return _truth_operands(test.left) + _truth_operands(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _truth_operands(test.expression)
    return [test]


#: What a tensor knows without its values: comparing these reads nothing from the device.
_METADATA = frozenset({"shape", "ndim", "dtype", "device", "size", "numel", "dim",
                       "requires_grad", "is_cuda", "is_leaf", "grad_fn", "layout", "names"})


def _operand_name(operands: list[cst.BaseExpression], names: set[str]) -> str | None:
    """The name of ``names`` that is a compared operand, or the base of one
    (`token == eos`, `out.max() > 5`, `token[0] in stop`)."""
    for operand in operands:
        base, metadata = operand, False
        while True:
            if isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute):
                base = base.func
            elif isinstance(base, cst.Attribute):
                metadata = metadata or base.attr.value in _METADATA
                base = base.value
            elif isinstance(base, cst.Subscript):
                base = base.value
            else:
                break
        if not metadata and isinstance(base, cst.Name) and base.value in names:
            return base.value
    return None


def _to_cpu(call: cst.Call) -> bool:
    return len(call.args) == 1 and isinstance(call.args[0].value, cst.SimpleString) and (
        call.args[0].value.evaluated_value == "cpu")


def _new_list(parent: cst.CSTNode | None, md) -> int | None:  # type: ignore[no-untyped-def]
    """For a binding to a new list (``name = []``, ``name = [a, b]``, ``name: list[float] =
    []``, ``name = list(...)``, a list comprehension): 0 when it is certainly empty, 1
    otherwise; None for other bindings (which may alias a list made elsewhere)."""
    value = None
    if isinstance(parent, cst.Element):  # `preds, labels = [], []`: this name's element
        targets = md.parent(parent)
        target = md.parent(targets)
        assign = md.parent(target) if isinstance(target, cst.AssignTarget) else None
        if isinstance(targets, (cst.Tuple, cst.List)) and isinstance(assign, cst.Assign) and (
                len(assign.targets) == 1 and isinstance(assign.value, (cst.Tuple, cst.List))):
            values = assign.value.elements
            if len(values) == len(targets.elements) and not any(
                    isinstance(e, cst.StarredElement) for e in (*values, *targets.elements)):
                value = values[list(targets.elements).index(parent)].value
    elif isinstance(parent, cst.AssignTarget):
        assign = md.parent(parent)
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
            value = assign.value
    elif isinstance(parent, cst.AnnAssign):
        value = parent.value
    if isinstance(value, cst.List):
        return 1 if value.elements else 0
    if isinstance(value, cst.ListComp):
        return 1
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and (
        "builtins.list" in md.qualified_names(value.func)
    ):
        return 1 if value.args else 0
    return None


def _fresh_name(scope: Scope, wanted: str) -> str:
    candidate, number = wanted, 1
    while candidate in scope or scope.assignments[candidate] or scope.accesses[candidate]:
        number += 1
        candidate = f"{wanted}{number}"
    return candidate
