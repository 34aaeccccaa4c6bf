"""Branches on device values: what a device ``if`` does, and which rule rewrites it.

One function, :func:`judge_if`, looks at an ``if`` (with its ``elif`` / ``else`` chain)
whose test reads the device and returns a :class:`Verdict`: the rule that owns it, the
message, and the rewrite when there is one. Rules NSY101-NSY103 each report the verdicts
that carry their code, so every device ``if`` gets exactly one finding:

* NSY101 branch-to-where: every branch only assigns tensors to plain names, each name
  once, computed from the values before the ``if`` → ``name = torch.where(cond, a, b)``;
* NSY102 branch-to-cond: the branches return tensors, or compute pure statements that
  one ``where`` per name cannot express → ``torch.cond`` over generated local functions;
* NSY103 device-branch-control-flow: a branch breaks, continues, returns, raises, draws
  random numbers, updates in place, logs or calls unknown code → report only.

Running extremes (``if val.item() < best: best = val.item()``) belong to NSY203 and
counts under a device condition in a loop (``if norm > max_norm: clipped += 1``) to
NSY201; both are left alone here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

import libcst as cst

from ..analysis import Effect, Kind, ModuleAnalysis
from ..analysis.base import strip_parens, visit, walk
from ..rewrite import Rewrite
from ._conditions import (
    Condition,
    _number,
    device_condition,
    dtype_class,
    expression_effect,
    mentions_nan_check,
    proven_float,
    tensor_kind,
)
from ._helpers import code_of, method_call, short, torch_ref
from ._hoist import count_under_condition

WHERE, COND, CONTROL = "NSY101", "NSY102", "NSY103"

_COST = "a sync, and a graph break under torch.compile"
_HOST_COST = "no wait for the device, but a graph break under torch.compile"
_COND_WARNING = ("it removes the graph break, but Inductor still reads the predicate on the host "
                 "(one sync per call), both branches must return the same structure, "
                 "shapes and dtypes, and the result is differentiable through both: a constant "
                 "branch now requires grad when the other's inputs do")
#: Why torch.cond is only offered in compiled code (benchmarks/cond_eager_cost.py).
_EAGER_COND = ("this file does not always compile the code, and in eager mode torch.cond "
               "traces its branches on every call (forward and backward hundreds of times "
               "slower); it is offered in code the file compiles on every path "
               "(`@torch.compile`, `torch.compile(f)`, the forward of a module class every "
               "instance of which the file passes to `torch.compile` outside an `if`)")

#: Part of :func:`presumed_reason`'s text: a test on a presumed tensor.
_PRESUMED = "presumably a tensor but not known to be one"

#: Calls that keep shape and dtype and cannot produce inf/NaN or raise: what a value may
#: use for a where to be safe. The value is the dtype family the claim needs, if any.
_SAFE_METHODS = {"clone": None, "detach": None, "contiguous": None, "abs": "number",
                 "relu": "number", "neg": "number", "sigmoid": "float", "tanh": "float"}
_SAFE_FUNCTIONS = {"torch.abs": "number", "torch.relu": "number", "torch.neg": "number",
                   "torch.sigmoid": "float", "torch.tanh": "float",
                   "torch.nn.functional.relu": "number", "torch.clone": None}
_LIKE_FUNCTIONS = frozenset({"torch.zeros_like", "torch.ones_like", "torch.full_like"})
_CLAMPS = frozenset({"clamp", "clip", "torch.clamp", "torch.clip"})
#: Values that may share memory with their input: the original aliases, a where does not.
_VIEW_METHODS = frozenset({
    "detach", "view", "view_as", "reshape", "reshape_as", "t", "transpose", "permute",
    "squeeze", "unsqueeze", "expand", "expand_as", "flatten", "contiguous", "narrow", "select",
    "unflatten", "movedim", "swapaxes", "as_strided", "diagonal", "unfold", "split", "chunk",
})


@dataclass
class Verdict:
    """Which rule owns a device branch, what to say, and the fix if there is one."""

    code: str
    message: str
    rewrite: Rewrite | None = None


# -- the chain ---------------------------------------------------------------------------------


@dataclass
class Link:
    """One ``if`` / ``elif`` of a chain; ``condition`` is None for a host test."""

    node: cst.If
    condition: Condition | None


@dataclass
class Chain:
    """An ``if`` whose test reads the device, with the ``elif`` links and ``else`` after it."""

    links: list[Link]
    orelse: cst.Else | None
    #: The first device link is an ``elif`` of a host ``if``.
    is_elif: bool

    @property
    def start(self) -> cst.If:
        return self.links[0].node

    @property
    def condition(self) -> Condition:
        return self.links[0].condition  # type: ignore[return-value]

    def bodies(self) -> list[cst.BaseSuite]:
        return [link.node.body for link in self.links] + (
            [self.orelse.body] if self.orelse is not None else [])


def chain_at(analysis: ModuleAnalysis, node: cst.If) -> Chain | None:
    """The chain that starts at ``node``: its first link whose test reads the device."""
    if _after_device_link(analysis, node):
        return None  # part of an earlier link's chain
    parent = analysis.md.parent(node)
    is_elif = isinstance(parent, cst.If) and parent.orelse is node
    condition = device_condition(analysis, node.test)
    if condition is None:
        return None
    links = [Link(node, condition)]
    orelse = node.orelse
    while isinstance(orelse, cst.If):
        links.append(Link(orelse, device_condition(analysis, orelse.test)))
        orelse = orelse.orelse
    return Chain(links, orelse, is_elif=is_elif)


def _after_device_link(analysis: ModuleAnalysis, node: cst.If) -> bool:
    """Whether an earlier link of ``node``'s ``if``/``elif`` chain tests a device value.

    Remembered for every link on the way up, so that a chain of n links costs n tests
    (asking it afresh for each link tested n * n / 2, three times: once per rule)."""
    known = analysis.memo("branches.after_device_link")
    path: list[cst.CSTNode] = []
    current: cst.CSTNode = node
    while True:
        if current in known:
            found = bool(known[current])
            break
        path.append(current)
        parent = analysis.md.parent(current)
        if not (isinstance(parent, cst.If) and parent.orelse is current):
            found = False
            break
        if device_condition(analysis, parent.test) is not None:
            found = True
            break
        current = parent
    for passed in path:
        known[passed] = found
    return found


def header(node: cst.If | cst.While) -> str:
    keyword = "while" if isinstance(node, cst.While) else "if"
    return f"{keyword} {short(node.test, 50)}:"


def _tested(conditions: list[Condition | None]) -> tuple[str, str]:
    """What the tests of a branch read, and what that costs."""
    if all(c.on_host for c in conditions if c is not None):
        return "a CPU tensor", _HOST_COST
    return "a device value", _COST


# -- the verdict -------------------------------------------------------------------------------


def judge_if(analysis: ModuleAnalysis, node: cst.If) -> Verdict | None:
    """The verdict for the device branch starting at ``node``, or None when it is not one
    (a host test, part of another link's chain, a running extreme, or compile-guarded).

    Judged once per module analysis: NSY101, NSY102 and NSY103 all ask for every ``if``."""
    known = analysis.memo("branches.judge_if")
    if node not in known:
        known[node] = _judge_if(analysis, node)
    return known[node]  # type: ignore[return-value]


def _judge_if(analysis: ModuleAnalysis, node: cst.If) -> Verdict | None:
    chain = chain_at(analysis, node)
    if chain is None or _deliberate(analysis, chain) or _running_extreme(analysis, chain):
        return None
    if len(chain.links) == 1 and count_under_condition(analysis, chain.start) is not None:
        return None  # `if norm > max_norm: clipped += 1`: NSY201's (issue 18, form e)
    if _raised(chain) is not None:
        return None  # a validation guard: NSY401's (see validation_guard)
    if any(link.condition is not None and link.condition.tensor is None
           and _PRESUMED in link.condition.why_not for link in chain.links):
        why = next(link.condition.why_not for link in chain.links if link.condition
                   is not None and _PRESUMED in link.condition.why_not)
        return Verdict(WHERE, f"`{header(chain.start)}` branches on what is presumably a "
                              f"device value (if it is a tensor: {_COST}); no automatic fix: "
                              f"{why}")
    facts = _BodyFacts.of(analysis, chain.bodies())
    value, cost = _tested([link.condition for link in chain.links])
    what = f"`{header(chain.start)}` branches on {value} ({cost})"
    guarded = _guarded_plan(analysis, chain)
    if guarded is not None:
        return Verdict(WHERE, f"{what}; {guarded.summary}", guarded.rewrite)
    state = _state_plan(analysis, chain)
    if state is not None:
        return Verdict(WHERE, f"{what}; {state.summary}", state.rewrite)
    if facts.blocking:
        cond = _cond_plan(analysis, chain, facts) if facts.only_final_returns else None
        if cond is not None and (cond.rewrite is not None or cond.summary.endswith(
                _EAGER_COND)):  # torch.cond would fit, but the code runs eagerly: say so
            return Verdict(COND, f"{what}; {cond.summary}", cond.rewrite)
        return Verdict(CONTROL, f"{what}, and the branch {facts.describe()}: no automatic "
                                f"fix. {_idiom(chain, facts)}")
    where = _where_plan(analysis, chain)
    if where.rewrite is not None or not where.structural:
        return Verdict(WHERE, f"{what}; {where.summary}", where.rewrite)
    cond = _cond_plan(analysis, chain, facts)
    summary = cond.summary if cond.rewrite else f"{where.summary}; {cond.summary}"
    return Verdict(COND, f"{what}; {summary}", cond.rewrite)


def judge_if_expression(analysis: ModuleAnalysis, node: cst.IfExp) -> Verdict | None:
    """The verdict for ``a if <device condition> else b``: NSY101, with or without a fix."""
    condition = device_condition(analysis, node.test)
    if condition is None or analysis.hot.is_guarded_by_compile_check(node) or (
        analysis.hot.is_compile_check(node.test)
    ):
        return None
    if _extreme_expression(analysis, node):
        return None
    value, cost = _tested([condition])
    what = f"`{short(node, 60)}` branches on {value} ({cost})"
    problem = condition.why_not if condition.tensor is None else None
    values = [node.body, node.orelse]
    for value in values:
        if problem:
            break
        if tensor_kind(analysis, value) is not Kind.TENSOR:
            problem = f"`{short(value)}` is not known to be a tensor"
        elif not expression_effect(analysis, value).pure or _binds(value):
            problem = f"`{short(value)}` is not a pure tensor expression"
        elif _host_data_copy(analysis, value) is not None:
            problem = (f"`{short(value)}` copies host data to the device, and torch.where "
                       "would make both copies on every call (each waits for the device)")
    if problem:
        return Verdict(WHERE, f"{what}; no automatic fix: {problem}")
    parts = [_Value.of(analysis, v) for v in values]
    if parts[0].dtype and parts[1].dtype and parts[0].dtype != parts[1].dtype:
        return Verdict(WHERE, f"{what}; no automatic fix: the values' dtypes differ "
                              f"({parts[0].dtype} and {parts[1].dtype}; torch.where would "
                              "promote them)")
    reasons = list(condition.all_reasons)
    reasons += _value_reasons(analysis, parts, None)
    assign = analysis.md.parent(node)
    if isinstance(assign, cst.Assign) and any(p.aliases for p in parts) and any(
        isinstance(t.target, cst.Name) and _used_by_identity(analysis, t.target)
        for t in assign.targets
    ):
        reasons.append("the result is later updated in place or by identity; after the rewrite "
                       "it is a new tensor, not one of the values")
    torch, rewrite = torch_ref(analysis, Rewrite("Select with torch.where"))
    rewrite = rewrite.replace(node, _where(torch, condition.tensor, strip_parens(node.body),
                                           strip_parens(node.orelse)))
    return Verdict(WHERE, f"{what}; select with torch.where{_unsafe_note(reasons)}",
                   rewrite.unsafe() if reasons else rewrite)


def _raised(chain: Chain) -> cst.BaseExpression | None:
    """``X(...)`` of ``if <device test>: raise X(...)`` (no ``elif``/``else``, nothing else
    in the branch): a validation guard."""
    if len(chain.links) > 1 or chain.orelse is not None or chain.is_elif:
        return None
    items = _items(chain.start.body)
    if len(items) != 1 or not isinstance(items[0], cst.Raise) or items[0].exc is None or (
        items[0].cause is not None
    ):
        return None
    return items[0].exc


def validation_guard(analysis: ModuleAnalysis, node: cst.If) -> Verdict | None:
    """``if <device test>: raise X(...)``: NSY401's report, without a fix.

    The ``raise`` is the program's own logic, not a debug check that ``python -O`` removes:
    it stops the code at this line, and a caller may catch the exception and go on (a
    pipeline retried with another seed). ``torch._assert_async`` cannot keep that: on CUDA
    the failure is a device-side assert raised at a later call, after the code below the
    check ran on the bad values, and it leaves the CUDA context unusable; on the CPU the
    type becomes RuntimeError. So the guard is reported, never rewritten (issue 20).
    """
    chain = chain_at(analysis, node)
    if chain is None or _deliberate(analysis, chain):
        return None
    exc = _raised(chain)
    if exc is None:
        return None
    call = strip_parens(exc)
    kind = code_of(call.func if isinstance(call, cst.Call) else call)
    value, cost = _tested([link.condition for link in chain.links])
    what = f"`{header(chain.start)}` checks {value} before raising ({cost})"
    if chain.condition.tensor is None:
        return Verdict("NSY401", f"{what} (no automatic fix: {chain.condition.why_not})")
    return Verdict("NSY401", f"{what} (no automatic fix: `raise {kind}` stops the code at "
                             "this line and a caller may catch it; `torch._assert_async` "
                             "would raise RuntimeError, on CUDA only at a later call, after "
                             "the code below ran on the bad values, leaving the CUDA context "
                             "unusable. Check less often, or where the host reads the value "
                             "anyway)")


def _deliberate(analysis: ModuleAnalysis, chain: Chain) -> bool:
    """Code that already decides what to do under torch.compile."""
    return analysis.hot.is_guarded_by_compile_check(chain.start) or any(
        analysis.hot.is_compile_check(link.node.test) for link in chain.links)


# -- running extremes (NSY203's) ---------------------------------------------------------------


def _running_extreme(analysis: ModuleAnalysis, chain: Chain) -> bool:
    """``if val.item() < best: best = val.item()``: the branch stores the compared value."""
    sides = _ordered_sides(analysis, chain.start.test)
    if sides is None:
        return False
    for small in _small_statements(chain.start.body):
        if isinstance(small, cst.Assign):
            for target in small.targets:
                if _stores_other_side(analysis, target.target, small.value, sides):
                    return True
    return False


def _extreme_expression(analysis: ModuleAnalysis, node: cst.IfExp) -> bool:
    """``best = val if val < best else best``."""
    sides = _ordered_sides(analysis, node.test)
    parent = analysis.md.parent(node)
    if sides is None or not isinstance(parent, cst.Assign):
        return False
    return any(_stores_other_side(analysis, t.target, node.body, sides)
               or _stores_other_side(analysis, t.target, node.orelse, sides)
               for t in parent.targets)


def _ordered_sides(analysis: ModuleAnalysis,
                   test: cst.BaseExpression) -> tuple[str, str] | None:
    test = strip_parens(test)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or not isinstance(
        test.comparisons[0].operator, (cst.LessThan, cst.GreaterThan, cst.LessThanEqual,
                                       cst.GreaterThanEqual)
    ):
        return None
    right = test.comparisons[0].comparator
    return (_tensor_code(analysis, test.left), _tensor_code(analysis, right))


def _stores_other_side(analysis: ModuleAnalysis, target: cst.BaseExpression,
                       value: cst.BaseExpression, sides: tuple[str, str]) -> bool:
    stored = code_of(strip_parens(target))
    if stored not in sides:
        return False
    other = sides[1] if stored == sides[0] else sides[0]
    return _tensor_code(analysis, value) == other


def _tensor_code(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> str:
    """The code of the tensor behind a read or a detached copy: ``val`` for ``val.item()``."""
    expr = strip_parens(expr)
    read = analysis.host_read(expr)
    if read is not None:
        return _tensor_code(analysis, read.tensor)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and (
        expr.func.attr.value in ("detach", "clone") and not expr.args
    ):
        return _tensor_code(analysis, expr.func.value)
    return code_of(expr)


# -- what the branches do ----------------------------------------------------------------------


@dataclass
class _BodyFacts:
    """The effects of a chain's bodies, and the first statement showing each."""

    effect: Effect = Effect.NONE
    controls: list[str] = field(default_factory=list)
    #: Each branch ends in ``return <value>`` and has no other control flow.
    only_final_returns: bool = False

    _BLOCKING = Effect.CONTROL | Effect.RNG | Effect.INPLACE | Effect.IO | Effect.CALL | (
        Effect.BINDING)

    @classmethod
    def of(cls, analysis: ModuleAnalysis, bodies: Sequence[cst.BaseSuite]) -> _BodyFacts:
        facts = cls()
        for body in bodies:
            facts._block(analysis, _items(body))
        finals = [_items(body)[-1:] for body in bodies]
        facts.only_final_returns = (
            facts.effect & cls._BLOCKING == Effect.CONTROL and facts.controls.count("return")
            == len(bodies) and set(facts.controls) == {"return"}
            and all(f and isinstance(f[0], cst.Return) and f[0].value is not None
                    for f in finals))
        return facts

    @property
    def blocking(self) -> bool:
        return bool(self.effect & self._BLOCKING)

    def describe(self) -> str:
        if self.controls:
            kinds = list(dict.fromkeys(self.controls))
            return "has " + " and ".join(
                f"{'an' if k == 'assert' else 'a'} `{k}`" for k in kinds)
        for flag, text in ((Effect.RNG, "draws random numbers"),
                           (Effect.INPLACE, "updates state in place"),
                           (Effect.IO, "prints, logs or writes"),
                           (Effect.CALL, "calls code nosync-fix cannot see"),
                           (Effect.BINDING, "binds names with global, del, import or def")):
            if flag in self.effect:
                return text
        return "has side effects"

    def _block(self, analysis: ModuleAnalysis, items: Iterable[cst.CSTNode]) -> None:
        for item in items:
            if isinstance(item, cst.If):
                self.effect |= expression_effect(analysis, item.test)
                self._block(analysis, _items(item.body))
                if item.orelse is not None:
                    self._block(analysis, [item.orelse] if isinstance(item.orelse, cst.If)
                                else _items(item.orelse.body))
            elif isinstance(item, cst.BaseSmallStatement):
                self._small(analysis, item)
            else:
                self.effect |= analysis.effects.of(item)
                finder = _ControlFinder()
                visit(item, finder)
                self.controls += finder.found

    def _small(self, analysis: ModuleAnalysis, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            if small.value is not None:
                self.effect |= expression_effect(analysis, small.value)
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [
                small.target]
            for target in targets:
                if _stores_into_object(target):
                    self.effect |= Effect.INPLACE
        elif isinstance(small, cst.AugAssign):
            self.effect |= expression_effect(analysis, small.value)
            if not _always_host(analysis, small.target):  # `n += 1` on a Python counter is not
                self.effect |= analysis.effects.of(small)  # an in-place update of a tensor
        elif isinstance(small, cst.Expr):
            self.effect |= expression_effect(analysis, small.value)
        elif isinstance(small, (cst.Return, cst.Raise, cst.Break, cst.Continue, cst.Assert)):
            self.effect |= Effect.CONTROL
            self.controls.append({cst.Return: "return", cst.Raise: "raise", cst.Break: "break",
                                  cst.Continue: "continue", cst.Assert: "assert"}[type(small)])
            value = getattr(small, "value", None) or getattr(small, "exc", None)
            if value is not None:
                self.effect |= expression_effect(analysis, value)
        elif not isinstance(small, cst.Pass):
            self.effect |= analysis.effects.of(small) | Effect.BINDING


class _ControlFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[str] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def on_visit(self, node: cst.CSTNode) -> bool:
        kinds = {cst.Return: "return", cst.Raise: "raise", cst.Break: "break",
                 cst.Continue: "continue", cst.Assert: "assert"}
        if type(node) in kinds:
            self.found.append(kinds[type(node)])
        return super().on_visit(node)


_STEP_CALLS = frozenset({"zero_grad", "step", "backward", "update", "unscale_"})


def _steps_optimizer(chain: Chain) -> bool:
    """Whether a branch calls ``zero_grad``/``step``/``backward``/``update``: a training step
    is being skipped or redone, not a tensor repaired."""
    finder = _CallNames()
    for body in chain.bodies():
        visit(body, finder)
    return bool(finder.names & _STEP_CALLS)


class _CallNames(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            self.names.add(func.attr.value)
        elif isinstance(func, cst.Name):
            self.names.add(func.value)


def _module_state(chain: Chain) -> list[str]:
    """The attributes of ``self`` a chain assigns or (re-)registers as buffers."""
    finder = _StateFinder()
    for body in chain.bodies():
        visit(body, finder)
    return list(dict.fromkeys(finder.names))


class _StateFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and (
            target.value.value == "self"
        ):
            self.names.append(target.attr.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in (
            "register_buffer", "register_parameter"
        ) and isinstance(func.value, cst.Name) and func.value.value == "self" and node.args and (
            isinstance(node.args[0].value, cst.SimpleString)
        ):
            self.names.append(str(node.args[0].value.evaluated_value))


def _idiom(chain: Chain, facts: _BodyFacts) -> str:
    """The sync-free idiom that fits what the branch does."""
    guard = chain.condition.host_guard
    split = (f" The host test `{short(guard, 40)}` can stay an `if` around the device part."
             if guard is not None else "")
    return _idiom_for(chain, facts) + split


def _idiom_for(chain: Chain, facts: _BodyFacts) -> str:
    controls = set(facts.controls)
    if "raise" in controls or "assert" in controls:
        return ("To check without waiting, use `torch._assert_async(<condition that must "
                "hold>)`: the device reports the failure later, without a sync.")
    if mentions_nan_check(chain.start.test) and (
        controls & {"continue", "return", "break"} or _steps_optimizer(chain)
    ):
        return ("To skip a non-finite step without waiting, keep the step and mask its update "
                "(`torch.where(torch.isfinite(loss), update, 0)`), or keep a found-inf flag on "
                "the device and let the optimizer step consume it, as torch.amp.GradScaler does.")
    if "break" in controls:
        return ("For early stopping, check the condition every N steps "
                "(`if step % N == 0 and ...`): the host then waits once per N steps.")
    if "continue" in controls:
        return ("To skip work without waiting, mask its effect with torch.where, or check the "
                "condition every N steps.")
    if "return" in controls:
        return ("If both outcomes are tensors, return `torch.where(cond, a, b)` or "
                "`torch.cond(...)`; otherwise check less often.")
    if Effect.RNG in facts.effect:
        return ("The branch draws random numbers: evaluating it on every path would shift the "
                "random stream. Keep the branch, or decide on the host less often.")
    state = _module_state(chain)
    if state:
        names = ", ".join(f"`self.{n}`" for n in state[:3])
        return (f"The branch changes module state ({names}). Select the value per call "
                "in one statement after host-only set-up: "
                "`self.register_buffer(name, torch.where(cond, a, b))` (NSY101 writes it when "
                "both branches end by re-registering the same buffer and their set-up can "
                "run on both paths). A masked in-place `self.buf.copy_(torch.where(cond, a, "
                "b))` writes through every alias of the buffer: if `__init__` stores the same "
                "tensor under another name (`self.original_inv_freq = self.inv_freq`), the "
                "copy overwrites that source too.")
    if Effect.INPLACE in facts.effect:
        return ("Mask the update instead of branching: `t.copy_(torch.where(cond, new, t))`, or "
                "scale the update by the condition.")
    if Effect.IO in facts.effect:
        return ("Log without waiting: keep the tensors and print them every N steps "
                "(deferred logging).")
    if Effect.CALL in facts.effect:
        return ("If the called code is pure, `torch.cond(pred, true_fn, false_fn, operands)` "
                "can express the branch; otherwise check the condition less often.")
    return "Check the condition less often, or make the branch compute tensors only."


# -- NSY101: torch.where -----------------------------------------------------------------------


@dataclass
class _Plan:
    """A rewrite, or why there is none (``structural``: torch.cond may still express it)."""

    rewrite: Rewrite | None
    summary: str
    structural: bool = False


@dataclass(frozen=True)
class _Layout:
    """A value has exactly the shape and dtype of ``base``, given dtype family ``needs``."""

    base: str
    needs: frozenset[str] = frozenset()
    #: A node of the base tensor, to ask for its dtype family.
    node: cst.BaseExpression | None = field(default=None, compare=False, hash=False)


@dataclass
class _Value:
    """The value a name ends with on one path through a chain."""

    expr: cst.BaseExpression
    reads: frozenset[str]
    tensor: bool
    shape: _Shape
    #: The expression is a plain reference, or a view: the original aliases it.
    aliases: bool
    dtype: str | None = None

    @classmethod
    def of(cls, analysis: ModuleAnalysis, expr: cst.BaseExpression) -> _Value:
        return cls(expr=expr, reads=frozenset(analysis.loops.names_read_in(expr)),
                   tensor=tensor_kind(analysis, expr) is Kind.TENSOR,
                   shape=_shape(analysis, expr), aliases=_aliases(expr),
                   dtype=dtype_class(analysis, expr))

    @classmethod
    def current(cls, analysis: ModuleAnalysis, name: str, node: cst.Name) -> _Value:
        return cls(expr=cst.Name(name), reads=frozenset({name}), tensor=True,
                   shape=_Shape(_Layout(name, node=node), depends=frozenset({name})),
                   aliases=True, dtype=dtype_class(analysis, node))


@dataclass
class _Selection:
    """What a chain (or one branch) assigns: per name, the value it ends with."""

    names: dict[str, _Value]
    reasons: list[str]
    #: In a branch: the index of the statement assigning each name.
    positions: dict[str, int] = field(default_factory=dict)


class _Structural(Exception):
    """The branches are pure, but one ``where`` per name cannot express them."""


class _NoFix(Exception):
    """The branches cannot be rewritten faithfully (the message says why)."""


def _where_plan(analysis: ModuleAnalysis, chain: Chain) -> _Plan:
    try:
        selection = _select(analysis, chain)
    except _Structural as problem:
        return _Plan(None, f"no torch.where fix: {problem}", structural=True)
    except _NoFix as problem:
        return _Plan(None, f"no automatic fix: {problem}")
    if not selection.names:
        return _Plan(None, "no automatic fix: the branch assigns nothing")
    torch, rewrite = torch_ref(analysis, Rewrite("Select with torch.where"))
    statements: list[cst.BaseStatement] = []
    names = list(selection.names)
    if len(names) > 1:
        # Several statements: evaluate the tests once, before any name changes.
        selection, statements = _hoist_tests(analysis, chain)
    for name in names:
        statements.append(_assign(name, selection.names[name].expr))
    rewrite = rewrite.replace(chain.start, _replacement(chain, statements))
    reasons = list(dict.fromkeys(selection.reasons))
    summary = "select with torch.where" + _unsafe_note(reasons)
    return _Plan(rewrite.unsafe() if reasons else rewrite, summary)


@dataclass(frozen=True)
class _Guard:
    """What a host guard around a select tells the NSY101 machinery (see _guarded_plan)."""

    #: Host assignments at the top of the branch that stay host code (not selected).
    temps: tuple[cst.Assign, ...] = ()
    #: Their names.
    names: frozenset[str] = frozenset()
    #: Code of the tensors the host guard proves to be floating point.
    floats: frozenset[str] = frozenset()


#: The guard of the plan being built (a context variable, so that the helpers deep in
#: _select need no extra parameter; it is only set inside _guarded_plan).
_NO_GUARD = _Guard()
_GUARD: ContextVar[_Guard] = ContextVar("_GUARD", default=_NO_GUARD)

_FINFO_FIELDS = frozenset({"max", "min", "eps", "tiny", "smallest_normal", "resolution",
                           "bits"})


def _guarded_plan(analysis: ModuleAnalysis, chain: Chain) -> _Plan | None:
    """``if host and device: <pure update>`` → ``if host: <torch.where on device>``.

    The host conjuncts (dtype, shape, flags, configuration) stay an ``if``: the original
    evaluated the device part only when they held, and so does the rewrite. Inside it,
    the device part selects with torch.where as NSY101 does for a device-only test.
    Assignments of host numbers at the top of the branch
    (``clamp_value = torch.finfo(h.dtype).max - 1000``) stay host code and now run
    whenever the host part holds. None when the chain is not such a guard.
    """
    condition = chain.condition
    device = condition.device_part
    if device is None or condition.host_guard is None:
        return None
    if len(chain.links) > 1 or chain.orelse is not None or chain.is_elif:
        return _Plan(None, f"no automatic fix: the host test `{short(condition.host_guard, 40)}` "
                           "could stay an `if` around a torch.where, but the branch has an "
                           "`else` or `elif` that runs when either part fails")
    body = chain.start.body
    if not isinstance(body, cst.IndentedBlock):
        return None
    floats = proven_float(analysis, condition.host_guard)
    temps: list[cst.SimpleStatementLine] = []
    names: list[str] = []
    reasons: list[str] = []
    for line in body.body:
        assign = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(
            line.body) == 1 else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)):
            break
        risk = _host_number(analysis, assign.value, frozenset(names), floats)
        if risk is False:
            break
        temps.append(line)
        names.append(assign.targets[0].target.value)  # type: ignore[attr-defined]
        if risk:
            reasons.append(f"`{short(assign)}` now runs whenever `{short(condition.host_guard)}` "
                           f"holds, not only when the device test does, and {risk}")
    if names:
        later: set[str] = set()
        for after in analysis.loops.statements_after(chain.start):
            later |= analysis.loops.names_read_in(after)
        if later & set(names):
            return _Plan(None, f"no automatic fix: `{sorted(later & set(names))[0]}` is read "
                               "after the `if`, and the rewrite would bind it on both paths")
    rest = body.body[len(temps):]
    if not rest:
        return None
    facts = _BodyFacts()
    facts._block(analysis, [i for line in rest for i in _items(line)])
    if facts.blocking:
        return None
    sub = Chain([Link(chain.start, device)], None, is_elif=False)
    token = _GUARD.set(_Guard(tuple(t.body[0] for t in temps),  # type: ignore[misc]
                              frozenset(names), floats))
    try:
        selection = _select(analysis, sub)
        statements: list[cst.BaseStatement] = []
        if len(selection.names) > 1:
            selection, statements = _hoist_tests(analysis, sub)
    except (_Structural, _NoFix) as problem:
        return _Plan(None, f"no automatic fix: {problem}")
    finally:
        _GUARD.reset(token)
    if not selection.names:
        return None
    torch, rewrite = torch_ref(analysis, Rewrite(
        "Keep the host test as an `if`; select the device part with torch.where"))
    for name, value in selection.names.items():
        statements.append(_assign(name, value.expr))
    collector = _CommentCollector()
    for line in rest:
        collector._statement(line)
    statements[0] = statements[0].with_changes(  # type: ignore[attr-defined]
        leading_lines=collector.lines)
    replacement = chain.start.with_changes(
        test=condition.host_guard, body=body.with_changes(body=[*temps, *statements]))
    rewrite = rewrite.replace(chain.start, replacement)
    reasons = list(dict.fromkeys(reasons + selection.reasons))
    summary = (f"keep the host test `{short(condition.host_guard, 40)}` as an `if` and select "
               f"the device part with torch.where{_unsafe_note(reasons)}")
    return _Plan(rewrite.unsafe() if reasons else rewrite, summary)


# -- NSY101: a predicated update of module state ----------------------------------------------


@dataclass(frozen=True)
class _StateUpdate:
    """The last statement of a branch: ``self.register_buffer("name", value, ...)`` or
    ``self.name = value``."""

    #: What it updates ("the buffer `inv_freq`"), the same in both branches.
    what: str
    value: cst.BaseExpression
    #: The code of everything but the value (the other arguments), the same in both.
    rest: str
    statement: cst.SimpleStatementLine

    def with_value(self, value: cst.BaseExpression) -> cst.SimpleStatementLine:
        small = self.statement.body[0]
        if isinstance(small, cst.Assign):
            return self.statement.with_changes(body=[small.with_changes(value=value)])
        call = small.value  # type: ignore[attr-defined]
        args = list(call.args)
        args[1] = args[1].with_changes(value=value)
        return self.statement.with_changes(
            body=[small.with_changes(value=call.with_changes(args=args))])


def _is_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"


def _state_update(analysis: ModuleAnalysis,
                  statement: cst.BaseStatement) -> _StateUpdate | None:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        func, args = call.func, call.args
        if not (isinstance(func, cst.Attribute) and func.attr.value == "register_buffer"
                and _is_self(func.value) and len(args) >= 2
                and all(not a.star for a in args)
                and all(a.keyword is None for a in args[:2])
                and isinstance(args[0].value, cst.SimpleString)):
            return None
        rest = ", ".join(code_of(a.value) if a.keyword is None else
                         f"{a.keyword.value}={code_of(a.value)}" for a in args[2:])
        name = args[0].value.evaluated_value
        # register_buffer takes a tensor (or None) and raises on anything else.
        return _StateUpdate(f"the buffer `{name!s}`", args[1].value, rest, statement)
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
        if isinstance(target, cst.Attribute) and _is_self(target.value) and (
                analysis.tensors.is_tensor(small.value)):
            return _StateUpdate(f"`self.{target.attr.value}`", small.value, "", statement)
    return None


def _state_plan(analysis: ModuleAnalysis, chain: Chain) -> _Plan | None:
    """``if c: <set-up>; self.register_buffer("b", x) else: <set-up>; self.register_buffer("b",
    y)`` → both set-ups, then ``self.register_buffer("b", torch.where(c, x, y))``.

    Hugging Face's long-RoPE frequency switch. Always unsafe: the set-up of both branches
    now runs on every call (a lazy initialisation happens on the first call, not the first
    long one), both values are evaluated, torch.where broadcasts and promotes, and the
    buffer holds a new tensor where it held one of the two before (an alias). None when
    the chain is not such an update.
    """
    if len(chain.links) != 1 or chain.orelse is None or chain.condition.tensor is None:
        return None
    branches = [_statements(body) for body in chain.bodies()]
    updates = [_state_update(analysis, b[-1]) if b else None for b in branches]
    if None in updates:
        return None
    then, otherwise = updates  # type: ignore[misc]
    if (then.what, then.rest) != (otherwise.what, otherwise.rest):  # type: ignore[union-attr]
        return None
    setups = [b[:-1] for b in branches]
    for setup in setups:
        if _setup_problem(analysis, setup):
            return None
    places = [_Places.of(setup) for setup in setups]
    values = [_Places.of([u.value]) for u in updates]  # type: ignore[union-attr]
    test = _Places.of([chain.start.test])
    if any(p.reads & _decided_by(analysis, chain) for p in places):
        # A lazy set-up that reads what the test decides on (`init(seq_len=seq_len)`)
        # would run, hoisted, on the first call's values, not the first taken one's.
        return None
    # The rewrite runs the then-set-up, the else-set-up, the test and both values, in that
    # order: each must see what it saw in the original.
    if places[0].writes_any(places[1].reads | places[1].writes) or (
            places[1].writes_any(values[0].reads) or places[0].writes_any(values[1].reads)
            or (places[0].writes | places[1].writes) & test.reads):
        return None
    if not all(expression_effect(analysis, u.value).pure for u in updates):  # type: ignore
        return None
    reasons = list(chain.condition.all_reasons)
    # The comments of hoisted lines move with the rest of the chain's (see _replacement).
    hoisted = [s.with_changes(leading_lines=()) for setup in setups for s in setup]
    if hoisted:
        first = f"`{short(hoisted[0], 50)}`{' ...' if len(hoisted) > 1 else ''}"
        reasons.append(f"the set-up of both branches now runs on every call ({first}): a "
                       "lazy initialisation happens "
                       "on the first call, not the first that takes its branch")
    aliased = [u.value for u in updates if _aliases(u.value)]  # type: ignore[union-attr]
    if aliased:
        reasons.append(f"{then.what} now holds a new tensor selected by "  # type: ignore
                       f"torch.where, not `{short(aliased[0], 30)}` itself: code that updates "
                       "that tensor in place, or compares by identity, sees the difference")
    reasons.append("both values are evaluated, and torch.where broadcasts and promotes: they "
                   "must have the same shape and dtype")
    torch, rewrite = torch_ref(analysis, Rewrite(f"Update {then.what} with torch.where"))  # type: ignore
    select = _where(torch, chain.condition.tensor, then.value, otherwise.value)  # type: ignore
    statements = [*hoisted, then.with_value(select)]  # type: ignore[union-attr]
    rewrite = rewrite.replace(chain.start, _replacement(chain, statements)).unsafe()
    return _Plan(rewrite, f"update {then.what} with torch.where"  # type: ignore[union-attr]
                 + _unsafe_note(reasons))


def _decided_by(analysis: ModuleAnalysis, chain: Chain) -> frozenset[str]:
    """The per-call values the test depends on: the names it reads, and the names their
    assignments in the function read, that come from the function's parameters
    (``seq_len = torch.max(position_ids) + 1``; not ``limit = self.config.limit``)."""
    function = next((a for a in analysis.md.ancestors(chain.start)
                     if isinstance(a, cst.FunctionDef)), None)
    if function is None:
        return frozenset()
    assigned: dict[str, list[cst.BaseExpression]] = {}
    for node, _ in walk(function):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                for name in _target_names(target.target):
                    assigned.setdefault(name, []).append(node.value)
    reads = {name: set().union(*(analysis.loops.names_read_in(v) for v in values))
             for name, values in assigned.items()}
    params = function.params
    per_call = {p.name.value for p in (*params.posonly_params, *params.params,
                                       *params.kwonly_params)} - {"self", "cls"}
    changed = True
    while changed:
        changed = False
        for name, read in reads.items():
            if name not in per_call and read & per_call:
                per_call.add(name)
                changed = True
    found: set[str] = set()
    pending = list(analysis.loops.names_read_in(chain.start.test))
    while pending:
        name = pending.pop()
        if name not in found:
            found.add(name)
            pending += reads.get(name, ())
    return frozenset(found & per_call)


def _setup_problem(analysis: ModuleAnalysis, setup: Sequence[cst.BaseStatement]) -> str:
    """Why a branch's set-up cannot run on both paths ("" when it can, unsafely)."""
    for statement in setup:
        effect = analysis.effects.of(statement)
        if effect & (Effect.READ | Effect.RNG | Effect.IO | Effect.BINDING):
            return "reads, draws, prints or binds"
        finder = _ControlFinder()
        visit(statement, finder)
        if finder.found:
            return "controls"
        scope = analysis.md.scope(statement)
        for name in _stored_names(statement):
            # A local name the set-up binds must be read nowhere (`_` of a tuple).
            if scope is None or scope.accesses[name]:
                return f"binds `{name}`"
    return ""


@dataclass(frozen=True)
class _Places:
    """What code reads and writes: names and ``self.x`` attributes; ``self`` read whole
    (passed to a call, or a method of it called) stands for all of ``self.x``."""

    reads: frozenset[str]
    writes: frozenset[str]

    @classmethod
    def of(cls, nodes: Sequence[cst.CSTNode]) -> _Places:
        collector = _PlaceCollector()
        for node in nodes:
            visit(node, collector)
        return cls(frozenset(collector.reads), frozenset(collector.writes))

    def writes_any(self, reads: frozenset[str]) -> bool:
        if "self" in reads and any(w.startswith("self.") for w in self.writes):
            return True
        return bool(self.writes & reads)


class _PlaceCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.reads: set[str] = set()
        self.writes: set[str] = set()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._write(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._write(node.target)
        self._read(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._write(node.target)

    def _write(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._write(element.value)
        elif isinstance(target, cst.StarredElement):
            self._write(target.value)
        elif isinstance(target, cst.Name):
            self.writes.add(target.value)
        elif isinstance(target, cst.Attribute) and _is_self(target.value):
            self.writes.add(f"self.{target.attr.value}")
        else:
            self.writes.add(code_of(target))

    def _read(self, target: cst.BaseExpression) -> None:
        self.reads.add(code_of(target))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and _is_self(func.value):
            self.reads.add("self")  # a method of self may read any attribute
            if func.attr.value in ("register_buffer", "register_parameter") and node.args:
                name = node.args[0].value
                self.writes.add(f"self.{name.evaluated_value}" if isinstance(
                    name, cst.SimpleString) else "self")
        for arg in node.args:
            if _is_self(arg.value):
                self.reads.add("self")

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if _is_self(node.value):
            self.reads.add(f"self.{node.attr.value}")
        else:
            node.value.visit(self)  # not the attribute's name
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # not the keyword
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.reads.add(node.value)


def _host_number(analysis: ModuleAnalysis, expr: cst.BaseExpression, temps: frozenset[str],
                 floats: frozenset[str]) -> str | None | bool:
    """Whether ``expr`` computes a host number: None when it cannot raise either, a reason
    when it may raise, False when it is not known to be a host number."""
    expr = strip_parens(expr)
    if _number(expr) is not None:
        return None
    if isinstance(expr, cst.Name):
        return None if expr.value in temps or analysis.kind(expr) is Kind.HOST else False
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return _host_number(analysis, expr.expression, temps, floats)
    if isinstance(expr, cst.BinaryOperation) and isinstance(
        expr.operator, (cst.Add, cst.Subtract, cst.Multiply)
    ):
        sides = [_host_number(analysis, side, temps, floats) for side in (expr.left, expr.right)]
        if False in sides:
            return False
        return next((side for side in sides if side), None)
    if isinstance(expr, cst.Attribute) and expr.attr.value in _FINFO_FIELDS and isinstance(
        strip_parens(expr.value), cst.Call
    ):
        call = strip_parens(expr.value)
        args = [a.value for a in call.args]  # type: ignore[attr-defined]
        if "torch.finfo" not in analysis.md.qualified_names(call.func) or len(args) != 1 or (  # type: ignore[attr-defined]
            call.args[0].keyword is not None  # type: ignore[attr-defined]
        ):
            return False
        dtype = strip_parens(args[0])
        if isinstance(dtype, cst.Attribute) and dtype.attr.value == "dtype" and (
            code_of(strip_parens(dtype.value)) in floats
        ):
            return None
        return "`torch.finfo` raises for an integer dtype"
    return False


def _host_bound(analysis: ModuleAnalysis, bound: cst.BaseExpression) -> bool:
    """A clamp bound that is a host number: a name (or its negation) the analysis knows
    holds a host value, or a host assignment a guarded plan keeps."""
    bare = strip_parens(bound)
    if isinstance(bare, cst.UnaryOperation) and isinstance(bare.operator, (cst.Minus, cst.Plus)):
        bare = strip_parens(bare.expression)
    if not isinstance(bare, cst.Name):
        return False
    return bare.value in _GUARD.get().names or analysis.kind(bare) is Kind.HOST


def _select(analysis: ModuleAnalysis, chain: Chain,
            tests: Sequence[cst.BaseExpression] | None = None) -> _Selection:
    """Per name, the nested ``where`` it ends with; raises _Structural or _NoFix.

    ``tests`` replaces the links' tests (hoisted into names) when given.
    """
    reasons: list[str] = []
    for link in chain.links:
        if link.condition is None:
            if not expression_effect(analysis, link.node.test).pure:
                raise _NoFix(f"the test `{short(link.node.test)}` has side effects")
        elif link.condition.tensor is None:
            raise _NoFix(link.condition.why_not)
        else:
            reasons += link.condition.all_reasons
    test_reads = frozenset().union(*(analysis.loops.names_read_in(link.node.test)
                                      for link in chain.links))
    branches = [_branch_values(analysis, body) for body in chain.bodies()]
    if chain.orelse is None:
        branches.append(_Selection({}, []))
    assigned = list(dict.fromkeys(n for b in branches for n in b.names))
    for branch in branches:
        reasons += branch.reasons
        for name, value in branch.names.items():
            for other in sorted(value.reads & set(assigned) - {name}):
                # One statement per name, in `assigned` order: `name` may read `other` only
                # if both the original and the rewrite read its value from before the `if`.
                if assigned.index(other) < assigned.index(name) or (
                    other in branch.positions
                    and branch.positions[other] < branch.positions[name]
                ):
                    raise _Structural(f"`{name}` is computed from `{other}`, which the branch "
                                      "also assigns")
            if not value.tensor:
                raise _NoFix(f"`{name} = {short(value.expr, 40)}` does not assign a tensor "
                             "(torch.where would turn it into one)")
    names: dict[str, _Value] = {}
    for name in assigned:
        node = _name_node(chain, name)
        current = None
        if any(name not in b.names for b in branches):
            problem = _keeps_current(analysis, chain, name)
            if problem:
                raise _NoFix(problem)
            current = _Value.current(analysis, name, node)
        values = [b.names.get(name) or current for b in branches]
        dtypes = {v.dtype for v in values if v is not None}
        known = {d for d in dtypes if d} | (_binding_classes(analysis, node) if current else set())
        if len(known) > 1:
            families = " or ".join(f"{'an' if d == 'int' else 'a'} {d}" for d in sorted(known))
            raise _NoFix(f"`{name}` is {families} tensor depending on the path (torch.where "
                         "would promote it)")
        reasons += _value_reasons(analysis, values, node)
        if any(v.aliases for v in values) and _used_by_identity(analysis, node):  # type: ignore
            reasons.append(f"`{name}` is later updated in place or by identity; after the "
                           "rewrite it holds a new tensor, not the one it referred to")
        expr = values[-1].expr  # type: ignore[union-attr]
        for index in range(len(chain.links) - 1, -1, -1):
            test = tests[index] if tests is not None else None
            link = chain.links[index]
            chosen = values[index].expr  # type: ignore[union-attr]
            if link.condition is None:
                expr = cst.IfExp(test=test or strip_parens(link.node.test), body=chosen,
                                 orelse=expr)
            else:
                torch = analysis.torch_name() or "torch"
                expr = _where(torch, test or link.condition.tensor, chosen, expr)
        shapes = [v.shape for v in values]  # type: ignore[union-attr]
        names[name] = _Value(
            expr=expr, tensor=True, aliases=False,
            reads=frozenset().union(test_reads, *(v.reads for v in values)),  # type: ignore
            shape=_Shape(_common_layout(shapes), next((s.hazard for s in shapes if s.hazard),
                                                      None),
                         frozenset().union(*(s.depends for s in shapes))),
            dtype=next(iter(dtypes)) if len(dtypes) == 1 else None)
    return _Selection(names, reasons)


def _branch_values(analysis: ModuleAnalysis, body: cst.BaseSuite) -> _Selection:
    """What one branch assigns, name by name, from the values before the ``if``."""
    names: dict[str, _Value] = {}
    positions: dict[str, int] = {}
    reasons: list[str] = []

    def add(name: str, value: _Value, index: int) -> None:
        if name in names:
            raise _Structural(f"the branch assigns `{name}` twice")
        names[name] = value
        positions[name] = index

    skip = _GUARD.get().temps
    for index, item in enumerate(_items(body)):
        if isinstance(item, cst.Pass) or any(item is temp for temp in skip):
            continue
        if isinstance(item, cst.Assign) and len(item.targets) == 1:
            for name, value in _unpack(item.targets[0].target, item.value):
                if _binds(value):
                    raise _NoFix(f"`{short(value)}` binds a name with `:=`")
                if Effect.READ in expression_effect(analysis, value):
                    # torch.where would run the read on every path: a sync (or an error)
                    # the original had only on this one.
                    raise _NoFix(f"`{short(value)}` reads a device value on the host")
                copy = _host_data_copy(analysis, value)
                if copy is not None:
                    raise _NoFix(f"`{short(copy)}` copies host data to the device, and "
                                 "torch.where would make every path's copy on every call (on "
                                 "an accelerator each such copy waits for the device, so no "
                                 "wait is saved); make the tensors once (in `__init__`, as "
                                 "buffers) and select between them")
                add(name, _Value.of(analysis, value), index)
        elif isinstance(item, cst.AnnAssign) and item.value is not None and isinstance(
            item.target, cst.Name
        ):
            add(item.target.value, _Value.of(analysis, item.value), index)
        elif isinstance(item, cst.AugAssign):
            raise _NoFix(f"`{short(item)}` updates a Python value on the host")
        elif isinstance(item, cst.If):
            inner = chain_at(analysis, item)
            if inner is None or inner.is_elif:
                raise _Structural("a branch holds an `if` on a host value")
            selection = _select(analysis, inner)
            reasons += selection.reasons
            for name, value in selection.names.items():
                add(name, value, index)
        elif isinstance(item, cst.BaseCompoundStatement):
            keyword = type(item).__name__.lower()
            raise _Structural(f"a branch holds a `{keyword}` statement")
        else:
            raise _NoFix(f"`{short(item)}` is not an assignment")
    return _Selection(names, reasons, positions)


#: Factories that copy Python data (lists, numbers, arrays) into a new tensor.
_FROM_HOST_DATA = frozenset({"torch.tensor", "torch.as_tensor"})


def _host_data_copy(analysis: ModuleAnalysis, value: cst.BaseExpression) -> cst.Call | None:
    """A ``torch.tensor(data, device=...)`` in ``value`` that copies host data to a device
    (any device but the CPU): made in eager mode with a blocking copy, once per call."""
    for call in _calls(value):
        if not analysis.md.qualified_names(call.func) & _FROM_HOST_DATA:
            continue
        device = next((a.value for a in call.args if a.keyword is not None
                       and a.keyword.value == "device"), None)
        if device is not None and not (isinstance(device, cst.SimpleString)
                                       and device.evaluated_value == "cpu"):
            return call
    return None


def _calls(node: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            found.append(call)

    node.visit(Calls())
    return found


def _unpack(target: cst.BaseExpression,
            value: cst.BaseExpression) -> list[tuple[str, cst.BaseExpression]]:
    """``a, b = x, y`` as ``[(a, x), (b, y)]``; a plain name as one pair."""
    if isinstance(target, cst.Name):
        return [(target.value, strip_parens(value))]
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) == len(value.elements) and not any(
            isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)
        ):
            pairs = []
            for t, v in zip(target.elements, value.elements, strict=True):
                pairs += _unpack(t.value, v.value)
            return pairs
    if isinstance(target, (cst.Tuple, cst.List)):
        raise _Structural(f"`{short(target)} = {short(value, 30)}` unpacks a value")
    raise _NoFix(f"`{short(target)}` is not a plain name")


def _keeps_current(analysis: ModuleAnalysis, chain: Chain, name: str) -> str | None:
    """Why a path may not keep ``name``'s current value (None: it may)."""
    statement = analysis.md.statement_of(chain.start)
    if statement is None or not _bound_before(analysis, name, statement):
        return f"`{name}` is not assigned before the `if` (torch.where needs its current value)"
    if not _always_tensor(analysis, chain, name):
        return (f"`{name}` may not hold a tensor before the `if` (torch.where would turn a "
                "Python number into a tensor)")
    return None


def _value_reasons(analysis: ModuleAnalysis, values: Sequence[_Value | None],
                   node: cst.Name | None) -> list[str]:
    """Why selecting among ``values`` with torch.where may differ from branching."""
    reasons: list[str] = []
    present = [v for v in values if v is not None]
    hazard = next((v.shape.hazard for v in present if v.shape.hazard), None)
    if hazard:
        reasons.append(f"torch.where computes every value, so `{hazard}` also runs on the path "
                       "the original did not take, where it may produce inf/NaN (and NaN "
                       "gradients) or raise; only +, -, * and a few elementwise functions are "
                       "known not to")
    layout = _common_layout([v.shape for v in present])
    subject = f"`{node.value}`" if node is not None else "the values"
    if layout is None:
        reasons.append(f"{subject} may differ in shape or dtype between the paths "
                       "(torch.where broadcasts and promotes)")
    elif not _needs_met(analysis, layout):
        family = "floating-point" if "float" in layout.needs else "floating-point or integer"
        reasons.append(f"`{layout.base}` is not known to be a {family} tensor: on another "
                       "dtype the update changes the dtype (a float bound or factor makes an "
                       "integer tensor float) and torch.where promotes the other path too")
    elif len({v.shape.depends for v in present}) > 1:
        reasons.append(f"{subject} depends on different tensors on each path: torch.where sends "
                       "(zero) gradients to tensors the original's path did not use")
    return reasons


def _common_layout(shapes: Sequence[_Shape]) -> _Layout | None:
    """The layout all ``shapes`` share (one base; the dtype needs of all), or None."""
    layouts = [s.layout for s in shapes]
    if None in layouts or len({layout.base for layout in layouts}) != 1:  # type: ignore
        return None
    needs = frozenset().union(*(layout.needs for layout in layouts))  # type: ignore
    first = layouts[0]
    return _Layout(first.base, needs, first.node)  # type: ignore[union-attr]


def _needs_met(analysis: ModuleAnalysis, layout: _Layout) -> bool:
    """Whether the base's dtype family is one the operations keep (a float tensor times
    0.5 stays a float tensor of the same dtype; an integer one becomes float)."""
    if not layout.needs:
        return True
    family = dtype_class(analysis, layout.node) if layout.node is not None else None
    if layout.base in _GUARD.get().floats:
        family = "float"
    if "float" in layout.needs:
        return family == "float"
    return family in ("float", "int")


@dataclass(frozen=True)
class _Shape:
    """What a value's operations say about it: its layout when they keep the shape and
    dtype of one tensor, the first operation not known to be free of inf/NaN and errors,
    and the tensors gradients flow to."""

    layout: _Layout | None
    hazard: str | None = None
    depends: frozenset[str] = frozenset()


def _shape(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> _Shape:
    expr = strip_parens(expr)
    if isinstance(expr, (cst.Name, cst.Attribute)):
        if tensor_kind(analysis, expr) is Kind.TENSOR:
            return _Shape(_Layout(code_of(expr), node=expr), depends=frozenset({code_of(expr)}))
        return _Shape(None)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        inner = _shape(analysis, expr.expression)
        return _needing(inner, "number" if isinstance(expr.operator, cst.Minus) else None)
    if isinstance(expr, cst.BinaryOperation):
        return _binary_shape(analysis, expr)
    if isinstance(expr, cst.Call):
        return _call_shape(analysis, expr)
    return _Shape(None, None if isinstance(expr, (cst.Integer, cst.Float)) else code_of(expr))


def _binary_shape(analysis: ModuleAnalysis, expr: cst.BinaryOperation) -> _Shape:
    if not isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply)):
        return _Shape(None, code_of(expr))
    families: set[str] = {"number"}
    shapes: list[_Shape] = []
    for side in (expr.left, expr.right):
        number = _number(strip_parens(side))
        if number is not None:
            families.add("float" if isinstance(number, float) else "number")
        else:
            shapes.append(_shape(analysis, side))
    hazard = next((s.hazard for s in shapes if s.hazard), None)
    depends = frozenset().union(*(s.depends for s in shapes))
    layouts = [s.layout for s in shapes]
    if None in layouts or len({layout.base for layout in layouts}) != 1:  # type: ignore
        return _Shape(None, hazard, depends)
    needs = frozenset().union(families, *(layout.needs for layout in layouts))  # type: ignore
    first = layouts[0]
    return _Shape(_Layout(first.base, needs, first.node), hazard, depends)  # type: ignore


def _call_shape(analysis: ModuleAnalysis, call: cst.Call) -> _Shape:
    func = call.func
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    qualified = [q for q in analysis.md.qualified_names(func) if q.startswith("torch.")] if (
        not isinstance(func, cst.Attribute) or isinstance(func.value, (cst.Name, cst.Attribute))
    ) else []
    is_method = isinstance(func, cst.Attribute) and not qualified
    name = func.attr.value if is_method else (qualified[0] if qualified else None)  # type: ignore
    receiver = func.value if is_method else (args[0] if args else None)  # type: ignore
    extra = args if is_method else args[1:]
    if name is None or receiver is None:
        return _Shape(None, code_of(call))
    if name in _LIKE_FUNCTIONS:
        literals = all(_number(strip_parens(a)) is not None for a in extra)
        if keywords or not literals or len(extra) > (1 if name == "torch.full_like" else 0):
            return _Shape(None)
        inner = _shape(analysis, receiver)  # only its shape and dtype: no gradient flows
        layout = _Layout(inner.layout.base, node=inner.layout.node) if inner.layout else None
        return _Shape(layout, inner.hazard)
    table = _SAFE_METHODS if is_method else _SAFE_FUNCTIONS
    if name in table and not extra and not keywords:
        inner = _needing(_shape(analysis, receiver), table[name])
        if name == "detach":
            return _Shape(inner.layout, inner.hazard)
        return inner
    if name in _CLAMPS:
        bounds = extra + [v for k, v in keywords.items() if k in ("min", "max")]
        numbers = [_number(strip_parens(b)) for b in bounds]
        hosts = [n is None and _host_bound(analysis, b) for n, b in zip(numbers, bounds,
                                                                          strict=True)]
        if not bounds or set(keywords) - {"min", "max"} or not all(
            n is not None or h for n, h in zip(numbers, hosts, strict=True)
        ):
            return _Shape(None, code_of(call))
        # A host bound of unknown type may be a float: it keeps only a float tensor's dtype.
        family = "float" if any(isinstance(n, float) for n in numbers) or any(hosts) else (
            "number")
        return _needing(_shape(analysis, receiver), family)
    return _Shape(None, code_of(call))


def _needing(shape: _Shape, family: str | None) -> _Shape:
    """``shape``, its layout also needing the dtype ``family``."""
    layout = shape.layout
    if layout is None or family is None:
        return shape
    return _Shape(_Layout(layout.base, layout.needs | {family}, layout.node), shape.hazard,
                  shape.depends)


def _aliases(expr: cst.BaseExpression) -> bool:
    expr = strip_parens(expr)
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
        return True
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and (
        expr.func.attr.value in _VIEW_METHODS)


def _hoist_tests(analysis: ModuleAnalysis,
                 chain: Chain) -> tuple[_Selection, list[cst.BaseStatement]]:
    """Bind each test of the chain to a fresh name, and select with those names."""
    scope = analysis.md.scope(chain.start)
    taken: set[str] = set()
    tests: list[cst.BaseExpression] = []
    statements: list[cst.BaseStatement] = []
    for link in chain.links:
        name = _fresh(scope, "cond", taken)
        taken.add(name)
        value = link.condition.tensor if link.condition is not None else strip_parens(
            link.node.test)
        statements.append(_assign(name, value))  # type: ignore[arg-type]
        tests.append(cst.Name(name))
    return _select(analysis, chain, tests), statements


def _where(torch: str, test: cst.BaseExpression, chosen: cst.BaseExpression,
           otherwise: cst.BaseExpression) -> cst.Call:
    return cst.Call(func=cst.Attribute(cst.Name(torch), cst.Name("where")),
                    args=[cst.Arg(test), cst.Arg(chosen), cst.Arg(otherwise)])


def _unsafe_note(reasons: Sequence[str]) -> str:
    if not reasons:
        return ""
    return " (unsafe: " + "; ".join(dict.fromkeys(reasons)) + ")"


# -- NSY102: torch.cond ------------------------------------------------------------------------


def _cond_plan(analysis: ModuleAnalysis, chain: Chain, facts: _BodyFacts) -> _Plan:
    try:
        return _build_cond(analysis, chain, facts)
    except (_NoFix, _Structural) as problem:
        return _Plan(None, f"no torch.cond fix: {problem}")


def _build_cond(analysis: ModuleAnalysis, chain: Chain, facts: _BodyFacts) -> _Plan:
    if chain.is_elif or len(chain.links) > 1:
        raise _NoFix("`elif` chains are not rewritten to torch.cond")
    condition = chain.condition
    if condition.tensor is None:
        raise _NoFix(condition.why_not)
    statement = chain.start
    returns = facts.only_final_returns
    following: cst.BaseStatement | None = None
    branches = [_statements(statement.body)]
    if chain.orelse is not None:
        branches.append(_statements(chain.orelse.body))
    elif returns:
        following = analysis.loops.first_statement_after(statement)
        if following is None or not _is_return_line(following):
            raise _NoFix("the `if` returns, but the code after it does not simply return")
        branches.append([following])
    else:
        branches.append([])
    if any(_binds(s) for branch in branches for s in branch):
        raise _NoFix("a branch binds a name with `:=`")
    if Effect.READ in facts.effect or any(_tests_device(analysis, s)
                                          for branch in branches for s in branch):
        # torch.cond traces its branches whole: a host read inside one cannot be captured.
        raise _NoFix("a branch itself reads a device value on the host")
    if returns:
        if not all(_is_return_line(branch[-1]) for branch in branches):
            raise _NoFix("a branch returns from inside a statement line")
        results = [_returned(analysis, branch[-1]) for branch in branches]
        if len({len(r) for r in results}) != 1:
            raise _NoFix("the branches return different numbers of values")
        outputs: list[str] = []
    else:
        outputs = _outputs(analysis, chain, branches)
    operands, closures = _operands(analysis, chain, branches, outputs)
    if not analysis.hot.runs_compiled(statement):
        raise _NoFix(_EAGER_COND)
    scope = analysis.md.scope(statement)
    then_name = _fresh(scope, "_then", set())
    else_name = _fresh(scope, "_else", {then_name})
    functions = []
    for index, (name, branch) in enumerate(((then_name, branches[0]), (else_name, branches[1]))):
        if returns:
            body = list(branch[:-1])
            returned = _tuple([_unaliased(e, branch[:-1]) for e in results[index]])
            leading = [line for line in branch[-1].leading_lines if line.comment]
        else:
            body = [s for s in branch if not _is_pass_line(s)]
            returned = _tuple([_unaliased(cst.Name(o), branch) for o in outputs])
            leading = ()
        body.append(cst.SimpleStatementLine([cst.Return(returned)], leading_lines=leading))
        functions.append(cst.FunctionDef(
            name=cst.Name(name),
            params=cst.Parameters([cst.Param(cst.Name(o)) for o in operands]),
            body=cst.IndentedBlock(body)))
    torch, rewrite = torch_ref(analysis, Rewrite("Branch with torch.cond"))
    call = cst.Call(func=cst.Attribute(cst.Name(torch), cst.Name("cond")), args=[
        cst.Arg(condition.tensor), cst.Arg(cst.Name(then_name)), cst.Arg(cst.Name(else_name)),
        cst.Arg(_tuple([cst.Name(o) for o in operands], always=True))])
    if returns:
        final: cst.BaseSmallStatement = cst.Return(call)
    else:
        target = cst.Name(outputs[0]) if len(outputs) == 1 else cst.Tuple(
            [cst.Element(cst.Name(o)) for o in outputs], lpar=[], rpar=[])
        final = cst.Assign([cst.AssignTarget(target)], call)
    functions[0] = functions[0].with_changes(leading_lines=statement.leading_lines)
    comments = _comment_lines([_header_comments(statement.body)] + (
        [chain.orelse.leading_lines, _header_comments(chain.orelse.body)]
        if chain.orelse is not None else []))
    replacement = cst.FlattenSentinel([
        *functions, cst.SimpleStatementLine([final], leading_lines=comments)])
    rewrite = rewrite.replace(statement, replacement)
    if following is not None:
        rewrite = rewrite.replace(following, cst.RemovalSentinel.REMOVE)
    notes = [_COND_WARNING]
    if closures:
        names = ", ".join(f"`{c}`" for c in closures)
        notes.append(f"under torch.compile the host values the branches read ({names}) must "
                     "not change between calls: torch.cond cannot take a Python float that "
                     "Dynamo has made dynamic")
    notes += condition.unsafe_reasons
    summary = f"branch with torch.cond (unsafe: {'; '.join(notes)})"
    return _Plan(rewrite.unsafe(), summary)


def _statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    """The statements of a block, as lines (a one-line suite becomes lines)."""
    if isinstance(block, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine([s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
                for s in block.body]
    return list(block.body)  # type: ignore[attr-defined]


def _is_return_line(statement: cst.BaseStatement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Return) and statement.body[0].value is not None)


def _is_pass_line(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, cst.Pass) for s in statement.body)


def _header_comments(body: cst.BaseSuite) -> list[cst.EmptyLine]:
    header = body.header if isinstance(body, cst.IndentedBlock) else body.trailing_whitespace
    return [cst.EmptyLine(comment=header.comment)] if header.comment is not None else []


def _tests_device(analysis: ModuleAnalysis, node: cst.CSTNode) -> bool:
    """Whether ``node`` holds an ``if``, ``while`` or conditional expression on a device value."""
    finder = _DeviceTestFinder(analysis)
    visit(node, finder)
    return finder.found


class _DeviceTestFinder(cst.CSTVisitor):
    def __init__(self, analysis: ModuleAnalysis) -> None:
        self.analysis = analysis
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.If, cst.While, cst.IfExp)) and device_condition(
            self.analysis, node.test
        ) is not None:
            self.found = True
        return not self.found


def _returned(analysis: ModuleAnalysis, line: cst.BaseStatement) -> list[cst.BaseExpression]:
    value = line.body[0].value  # type: ignore[attr-defined]
    elements = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
    for element in elements:
        if isinstance(element, cst.StarredElement) or tensor_kind(
            analysis, element
        ) is not Kind.TENSOR:
            raise _NoFix(f"`{short(element)}` is not known to be a tensor")
    return elements


def _outputs(analysis: ModuleAnalysis, chain: Chain,
             branches: Sequence[Sequence[cst.BaseStatement]]) -> list[str]:
    """The names the branches assign that code after the ``if`` may read; each must be a
    tensor wherever it is assigned."""
    later: set[str] = set()
    for after in analysis.loops.statements_after(chain.start):
        later |= analysis.loops.names_read_in(after)
    outputs: list[str] = []
    for branch in branches:
        for statement in branch:
            for name, target in _bindings(statement):
                if name not in later:
                    continue
                if name not in outputs:
                    outputs.append(name)
                if target is None:
                    raise _NoFix(f"`{name}` is assigned inside a nested block")
                if analysis.kind(target) is not Kind.TENSOR:
                    raise _NoFix(f"`{name}` is assigned a value not known to be a tensor")
    if not outputs:
        raise _NoFix("nothing the branch assigns is used afterwards")
    return outputs


def _bindings(statement: cst.BaseStatement) -> list[tuple[str, cst.Name | None]]:
    """The names a statement binds, with the target node when it is a plain assignment
    at the statement's own level (None: bound inside a nested block)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return [(n, None) for n in _stored_names(statement)]
    found: list[tuple[str, cst.Name | None]] = []
    for small in statement.body:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else (
            [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else [])
        for target in targets:
            for name in sorted(_target_names(target)):
                found.append((name, _find_name(target, name)))
        if not targets:
            found += [(n, None) for n in _stored_names(small)]
    return found


def _stored_names(node: cst.CSTNode) -> list[str]:
    collector = _StoreCollector()
    visit(node, collector)
    return collector.names


class _StoreCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.append(node.name.value)
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.names += sorted(_target_names(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.names += sorted(_target_names(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.names += sorted(_target_names(node.target))

    def visit_For(self, node: cst.For) -> None:
        self.names += sorted(_target_names(node.target))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.names += sorted(_target_names(node.target))


def _operands(analysis: ModuleAnalysis, chain: Chain,
              branches: Sequence[Sequence[cst.BaseStatement]],
              outputs: Sequence[str]) -> tuple[list[str], list[str]]:
    """The tensors the branch functions take (what they read that was bound before the
    ``if``, and the outputs a branch passes through), and the local host values (numbers,
    configuration) they reach by closure instead."""
    operands: list[str] = []
    closures: list[str] = []
    statement = chain.start
    local = _local_names(analysis, statement)

    def take(name: str) -> None:
        if not _bound_before(analysis, name, statement):
            raise _NoFix(f"`{name}` is not assigned before the `if`")
        if not _always_tensor(analysis, chain, name):
            raise _NoFix(f"the branch reads and changes `{name}`, which is not known to be a "
                         "tensor")
        operands.append(name)

    for branch in branches:
        stored = {n for s in branch for n in _stored_names(s)}
        assigned: set[str] = set()
        for item in branch:
            for name in sorted(analysis.loops.names_read_in(item) - assigned,
                               key=lambda n: _first_position(analysis, item, n)):
                if name in operands or (name not in local and name not in stored):
                    continue
                if name in stored or _always_tensor(analysis, chain, name):
                    take(name)
                elif name not in closures and _host_name(analysis, item, name):
                    closures.append(name)
            if isinstance(item, cst.SimpleStatementLine):
                assigned |= {n for n, _ in _bindings(item)}
        for name in outputs:
            if _passes_through(name, branch) and name not in operands:
                take(name)
    return operands, [c for c in closures if c not in operands]


def _host_name(analysis: ModuleAnalysis, item: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` as read in ``item`` is known to hold a host value."""
    finder = _FirstName(name)
    visit(item, finder)
    return finder.node is not None and analysis.kind(finder.node) is Kind.HOST


def _passes_through(name: str, branch: Sequence[cst.BaseStatement]) -> bool:
    """Whether a branch leaves ``name`` as it was (does not assign it at its top level)."""
    return not any(n == name and target is not None
                   for statement in branch for n, target in _bindings(statement))


def _unaliased(expr: cst.BaseExpression,
               branch: Sequence[cst.BaseStatement]) -> cst.BaseExpression:
    """``x.clone()`` for a returned value that may share memory with an input (torch.cond
    rejects outputs that alias its operands): an operand, or a view of one, passed on."""
    return method_call(strip_parens(expr), "clone") if _may_alias(expr, branch) else expr


def _may_alias(expr: cst.BaseExpression, branch: Sequence[cst.BaseStatement]) -> bool:
    """Whether ``expr``, after ``branch`` ran, may be (a view of) a tensor from outside."""
    expr = strip_parens(expr)
    while _aliases(expr) and not isinstance(expr, cst.Name):
        expr = strip_parens(expr.func.value if isinstance(expr, cst.Call)  # type: ignore
                            else expr.value)  # type: ignore[attr-defined]
    if not isinstance(expr, cst.Name):
        return False
    for index in range(len(branch) - 1, -1, -1):
        if any(name == expr.value for name, _ in _bindings(branch[index])):
            value = _assigned_value(branch[index], expr.value)
            # The value was computed from the names as they were before this statement.
            return value is None or _may_alias(value, branch[:index])
    return True  # not assigned here: an operand, or a tensor reached by closure


def _assigned_value(statement: cst.BaseStatement, name: str) -> cst.BaseExpression | None:
    """The value a statement line assigns to ``name`` (None: not a plain assignment)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    value = None
    for small in statement.body:
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            try:
                pairs = _unpack(small.targets[0].target, small.value)
            except (_Structural, _NoFix):
                return None
            value = next((v for n, v in pairs if n == name), value)
        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and (
            small.target.value == name
        ):
            value = small.value
        elif name in _simple_binds(small):
            return None
    return value


def _first_position(analysis: ModuleAnalysis, item: cst.CSTNode, name: str) -> tuple[int, int]:
    finder = _FirstName(name)
    visit(item, finder)
    if finder.node is None:
        return (0, 0)
    line, column, _, _ = analysis.md.position(finder.node)
    return (line, column)


class _FirstName(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.node: cst.Name | None = None

    def visit_Name(self, node: cst.Name) -> None:
        if self.node is None and node.value == self.name:
            self.node = node


def _local_names(analysis: ModuleAnalysis, node: cst.CSTNode) -> set[str]:
    """Names bound in the function around ``node`` (module names are reached from the
    generated functions as globals)."""
    scope = analysis.md.scope(node)
    if scope is None or analysis.md.enclosing_function(node) is None:
        return set()
    return {a.name for a in scope.assignments}


def _tuple(elements: Sequence[cst.BaseExpression], always: bool = False) -> cst.BaseExpression:
    """One value as itself, several as ``a, b``; ``always``: a parenthesized tuple."""
    if len(elements) == 1 and not always:
        return elements[0]
    if always:
        return cst.Tuple([cst.Element(e) for e in elements])
    return cst.Tuple([cst.Element(e) for e in elements], lpar=[], rpar=[])


# -- shared helpers ----------------------------------------------------------------------------


def _items(block: cst.CSTNode | None) -> list[cst.CSTNode]:
    """The statements of a block, with simple statement lines split into small statements."""
    if block is None:
        return []
    if isinstance(block, cst.SimpleStatementSuite):
        return list(block.body)
    if isinstance(block, cst.SimpleStatementLine):
        return list(block.body)
    if isinstance(block, (cst.IndentedBlock, cst.Module)):
        items: list[cst.CSTNode] = []
        for statement in block.body:
            items += _items(statement) if isinstance(statement, cst.SimpleStatementLine) else [
                statement]
        return items
    return [block]


def _small_statements(block: cst.BaseSuite) -> list[cst.BaseSmallStatement]:
    return [i for i in _items(block) if isinstance(i, cst.BaseSmallStatement)]


def _stores_into_object(target: cst.BaseExpression) -> bool:
    if isinstance(target, (cst.Attribute, cst.Subscript)):
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_stores_into_object(e.value) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return _stores_into_object(target.value)
    return False


def _binds(node: cst.CSTNode) -> bool:
    """Whether ``node`` holds a ``:=``."""
    finder = _WalrusFinder()
    visit(node, finder)
    return finder.found


class _WalrusFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.found = True


def _name_node(chain: Chain, name: str) -> cst.Name:
    """A target node of ``name`` inside the chain (to ask the analysis about the name)."""
    for body in chain.bodies():
        finder = _TargetFinder(name)
        visit(body, finder)
        if finder.found is not None:
            return finder.found
    return cst.Name(name)


def _find_name(target: cst.BaseExpression, name: str) -> cst.Name | None:
    if isinstance(target, cst.Name):
        return target if target.value == name else None
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            found = _find_name(element.value, name)
            if found is not None:
                return found
    return None


class _TargetFinder(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.found: cst.Name | None = None

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if self.found is None:
            self.found = _find_name(node.target, self.name)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self.found is None:
            self.found = _find_name(node.target, self.name)


def _bound_before(analysis: ModuleAnalysis, name: str, statement: cst.CSTNode) -> bool:
    """Whether ``name`` is certainly bound when ``statement`` starts: assigned by a simple
    statement earlier in an enclosing block, a parameter, or an enclosing loop's target."""
    md = analysis.md
    node: cst.CSTNode = statement
    while True:
        parent = md.parent(node)
        if parent is None:
            return False
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            for earlier in parent.body:
                if earlier is node:
                    break
                if isinstance(earlier, cst.SimpleStatementLine) and any(
                    name in _simple_binds(s) for s in earlier.body
                ):
                    return True
            holder = md.parent(parent) if isinstance(parent, cst.IndentedBlock) else None
            if isinstance(holder, cst.FunctionDef):
                params = holder.params
                every = [*params.posonly_params, *params.params, *params.kwonly_params]
                return any(p.name.value == name for p in every)
            if isinstance(holder, cst.ClassDef) or holder is None:
                return False
            if isinstance(holder, cst.For) and parent is holder.body and name in _target_names(
                holder.target
            ):
                return True
            if isinstance(holder, cst.With) and parent is holder.body and any(
                item.asname is not None and name in _target_names(item.asname.name)
                for item in holder.items
            ):
                return True
        node = parent


def _simple_binds(small: cst.BaseSmallStatement) -> set[str]:
    if isinstance(small, cst.Assign):
        return {n for t in small.targets for n in _target_names(t.target)}
    if isinstance(small, cst.AnnAssign) and small.value is not None:
        return _target_names(small.target)
    if isinstance(small, cst.AugAssign):
        return _target_names(small.target)
    return set()


def _target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _target_names(e.value)}
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


def _binding_classes(analysis: ModuleAnalysis, node: cst.Name) -> set[str]:
    """The dtype families known for the values ``node``'s name is assigned in its scope."""
    scope = analysis.md.scope(node)
    classes: set[str] = set()
    for assignment in scope.assignments[node.value] if scope is not None else ():
        target = getattr(assignment, "node", None)
        parent = analysis.md.parent(target) if isinstance(target, cst.Name) else None
        statement = analysis.md.parent(parent) if isinstance(parent, cst.AssignTarget) else None
        if isinstance(statement, cst.Assign):
            family = dtype_class(analysis, statement.value)
            if family:
                classes.add(family)
    return classes


def _always_host(analysis: ModuleAnalysis, target: cst.BaseExpression) -> bool:
    """Whether ``target`` is a name that only ever holds host values (a Python counter)."""
    scope = analysis.md.scope(target)
    if not isinstance(target, cst.Name) or scope is None:
        return False
    assignments = list(scope.assignments[target.value])
    for assignment in assignments:
        node = getattr(assignment, "node", None)
        parent = analysis.md.parent(node) if isinstance(node, cst.Name) else None
        if isinstance(parent, cst.AugAssign):
            if analysis.kind(parent.value) is not Kind.HOST:
                return False
        elif not isinstance(node, cst.Name) or analysis.kind(node) is not Kind.HOST:
            return False
    return bool(assignments)


def _always_tensor(analysis: ModuleAnalysis, chain: Chain, name: str) -> bool:
    """Whether every binding of ``name`` in its scope gives a tensor."""
    scope = analysis.md.scope(chain.start)
    if scope is None:
        return False
    assignments = list(scope.assignments[name])
    if not assignments:
        return False
    for assignment in assignments:
        node = getattr(assignment, "node", None)
        if isinstance(node, cst.Param):
            node = node.name
        if not isinstance(node, cst.Name) or analysis.kind(node) is not Kind.TENSOR:
            return False
    return True


def _used_by_identity(analysis: ModuleAnalysis, node: cst.Name) -> bool:
    """Whether ``node``'s name is updated in place, compared with ``is``, or asked for
    ``.data`` / ``.grad`` in its scope: uses that see which tensor the name holds."""
    scope = analysis.md.scope(node)
    if scope is None:
        return True
    md = analysis.md
    for access in scope.accesses[node.value]:
        use = access.node
        parent = md.parent(use)
        if isinstance(parent, cst.Attribute) and parent.value is use:
            attr = parent.attr.value
            if attr in ("data", "grad") or (attr.endswith("_") and not attr.endswith("__")):
                return True
        if isinstance(parent, cst.Subscript) and parent.value is use and isinstance(
            md.parent(parent), (cst.AssignTarget, cst.AugAssign, cst.Del)
        ):
            return True
        if isinstance(parent, cst.AugAssign) and parent.target is use:
            return True
        if isinstance(parent, cst.ComparisonTarget) and isinstance(
            parent.operator, (cst.Is, cst.IsNot)
        ):
            return True
        if isinstance(parent, cst.Comparison) and any(
            isinstance(c.operator, (cst.Is, cst.IsNot)) for c in parent.comparisons
        ):
            return True
    return False


def _fresh(scope, base: str, taken: set[str]) -> str:  # type: ignore[no-untyped-def]
    """``base``, or ``base_2``, ``base_3`` ...: a name the scope does not use."""
    candidate, number = base, 1
    while candidate in taken or (scope is not None and (
        candidate in scope or scope.accesses[candidate]
    )):
        number += 1
        candidate = f"{base}_{number}"
    return candidate


def _assign(name: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])


def _replacement(chain: Chain, statements: list[cst.BaseStatement]) -> cst.CSTNode:
    """What replaces the chain: its statements, keeping the comments and blank lines."""
    start = chain.start
    comments = _chain_comments(chain)
    first = statements[0]
    if chain.is_elif:
        statements[0] = first.with_changes(leading_lines=comments)  # type: ignore[attr-defined]
        return cst.Else(body=cst.IndentedBlock(statements), leading_lines=start.leading_lines)
    statements[0] = first.with_changes(  # type: ignore[attr-defined]
        leading_lines=[*start.leading_lines, *comments])
    return cst.FlattenSentinel(statements) if len(statements) > 1 else statements[0]


def _chain_comments(chain: Chain) -> list[cst.EmptyLine]:
    """Every comment inside the chain, in order, as lines of their own."""
    groups: list[Sequence[cst.EmptyLine]] = []
    for index, body in enumerate(chain.bodies()):
        if index > 0:
            holder = chain.links[index].node if index < len(chain.links) else chain.orelse
            groups.append(holder.leading_lines)  # type: ignore[union-attr]
        collector = _CommentCollector()
        collector.collect(body)
        groups.append(collector.lines)
    return _comment_lines(groups)


def _comment_lines(groups: Iterable[Sequence[cst.EmptyLine]]) -> list[cst.EmptyLine]:
    return [cst.EmptyLine(comment=line.comment) for group in groups for line in group
            if line.comment is not None]


class _CommentCollector:
    """The comments of a suite: its header, its statements' lines and trailing comments."""

    def __init__(self) -> None:
        self.lines: list[cst.EmptyLine] = []

    def collect(self, body: cst.BaseSuite) -> None:
        header = body.header if isinstance(body, cst.IndentedBlock) else body.trailing_whitespace
        if header.comment is not None:
            self.lines.append(cst.EmptyLine(comment=header.comment))
        if isinstance(body, cst.IndentedBlock):
            for statement in body.body:
                self._statement(statement)
            self.lines += [line for line in body.footer if line.comment is not None]

    def _statement(self, statement: cst.BaseStatement) -> None:
        self.lines += [line for line in statement.leading_lines if line.comment is not None]
        if isinstance(statement, cst.SimpleStatementLine):
            if statement.trailing_whitespace.comment is not None:
                self.lines.append(cst.EmptyLine(comment=statement.trailing_whitespace.comment))
        elif isinstance(statement, cst.If):
            self.collect(statement.body)
            orelse = statement.orelse
            while orelse is not None:
                self.lines += [line for line in orelse.leading_lines if line.comment is not None]
                self.collect(orelse.body)
                orelse = orelse.orelse if isinstance(orelse, cst.If) else None
