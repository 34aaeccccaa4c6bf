"""Where a tensor lives: copies to the host, and values certainly on the host.

Shared by the rules that must not call a read of a CPU tensor a sync (NSY202,
NSY301) and by NSY903, which reports the copies themselves.
"""

from __future__ import annotations

import libcst as cst

from ..analysis import Kind, ModuleAnalysis, Value
from ..analysis import _tables as T
from ..analysis.base import call_name, keyword_arg, own_code_nodes, positional_args
from ._scalars import assignment_of, single_binding_value


def host_transfer(analysis: ModuleAnalysis, node: cst.CSTNode) -> str | None:
    """"cpu", "numpy", "tolist" or "to" when ``node`` copies a tensor to the host.

    Only the first transfer of a chain counts: in ``t.cpu().numpy()`` it is ``.cpu()``.
    """
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    method = call_name(node)
    receiver = node.func.value
    if method in ("cpu", "tolist") and not node.args:
        pass
    elif method == "numpy" and not positional_args(node):
        pass
    elif method == "to" and _moves_to_cpu(analysis, node):
        pass
    else:
        return None
    if analysis.kind(receiver) is not Kind.TENSOR or _has_transfer(analysis, receiver):
        return None
    if _made_on_host(analysis, receiver, 0):
        return None  # torch.linspace(...).tolist(): a CPU tensor, nothing to wait for
    return method


#: Predicates of torch whose result is on the device of their arguments.
_TORCH_PREDICATES = frozenset({"torch.equal", "torch.allclose", "torch.isclose",
                               "torch.isnan", "torch.isinf", "torch.isfinite", "torch.any",
                               "torch.all", "torch.sum", "torch.logical_not", "torch.eq",
                               "torch.ne", "torch.gt", "torch.lt", "torch.ge", "torch.le"})


def host_only(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """Whether evaluating ``expr`` (a condition, a comparison, a predicate) touches only
    tensors certainly in host memory, with at least one such tensor: tokenizer output,
    ``torch.zeros(n, device="cpu")``, ``out.cpu()``. Reading it waits for no device.

    Remembered per expression: the branch rules, NSY401, NSY504 and NSY906 ask it of the
    same tests."""
    known = analysis.memo("host.host_only")
    if expr not in known:
        known[expr] = _host_only(analysis, expr)
    return bool(known[expr])


def _host_only(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    found = [False]
    visiting: set[str] = set()

    def check(node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.BooleanOperation):
            return check(node.left) and check(node.right)
        if isinstance(node, cst.UnaryOperation):
            return check(node.expression)
        if isinstance(node, cst.Comparison):
            return check(node.left) and all(check(c.comparator) for c in node.comparisons)
        if isinstance(node, cst.BinaryOperation):
            return check(node.left) and check(node.right)
        if isinstance(node, cst.Call):
            qualified = analysis.md.qualified_names(node.func)
            if "builtins.len" in qualified:
                return True  # len(stamps) > 0: a shape, known on the host without a read
            if qualified & _TORCH_PREDICATES:
                return all(check(a.value) for a in node.args if a.keyword is None)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
                call_name(node) in T.KEEPS_DEVICE_METHODS
                or call_name(node) in T.SAME_DEVICE_METHODS):
            return check(node.func.value)  # (ids > 5).any(), torch.isfinite(ids).all()
        read = analysis.host_read(node)
        if read is not None:
            node = read.tensor
        if isinstance(node, cst.Name) and node.value not in visiting:
            # score = train_score + test_score: host when its operands are
            value = single_binding_value(analysis, node)
            if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)):
                visiting.add(node.value)
                try:
                    return check(value)
                finally:
                    visiting.discard(node.value)
        if analysis.kind(node) is Kind.TENSOR or _made_on_host(analysis, node, 0,
                                                               reaching=True):
            if not _made_on_host(analysis, node, 0, reaching=True):
                return False
            found[0] = True
            return True
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.Name,
                             cst.Attribute, cst.Subscript)) and analysis.kind(node) is Kind.HOST:
            return True
        return isinstance(node, cst.Name) and bindings_host(node)

    def bindings_host(name: cst.Name) -> bool:
        """A name bound more than once (``top_score = 0``, later ``top_score = score``,
        also through ``global``): host when every binding is a plain assignment of a
        number or of a value ``check`` accepts."""
        if name.value in visiting or len(visiting) > 8:
            return False
        access = analysis.md.access(name)
        referents = list(access.referents) if access is not None else []
        if len(referents) < 2:
            return False
        visiting.add(name.value)
        try:
            for referent in referents:
                assign = assignment_of(analysis.md, getattr(referent, "node", None))
                if assign is None or len(assign.targets) != 1:
                    return False
                value = assign.value
                if isinstance(value, cst.UnaryOperation):
                    value = value.expression
                if not isinstance(value, (cst.Integer, cst.Float)) and not check(value):
                    return False
            return True
        finally:
            visiting.discard(name.value)

    return check(expr) and found[0]


def certainly_on_host(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is certainly a CPU tensor (or numpy array): reading it waits for
    no device. See :func:`_made_on_host`."""
    return _made_on_host(analysis, expr, 0)


def placed_on_host(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is a CPU tensor by what the code says: ``.cpu()``, ``.to("cpu")``,
    ``device="cpu"``, a tokenizer's output, and what is computed from those alone. Unlike
    :func:`certainly_on_host`, a factory without ``device=`` does not count: the default
    device may be set elsewhere, and examples stand such tensors in for device values."""
    return _made_on_host(analysis, expr, 0, explicit=True)


def _made_on_host(analysis: ModuleAnalysis, expr: cst.BaseExpression, depth: int,
                  explicit: bool = False, reaching: bool = False) -> bool:
    """Whether ``expr`` is certainly a CPU tensor made here: a torch factory without a
    device (or with ``device="cpu"``), a copy to the host (``.cpu()``, ``.to("cpu")``,
    ``.numpy()``), and what is cut from it, iterated (also ``reversed``, and through ``zip``
    and ``enumerate``), cast (``.to(torch.long)``) or converted.

    ``reaching``: a name bound more than once counts by the binding that reaches this use
    (see :func:`reaching_value`); only :func:`host_only` asks for it."""
    if depth > 8:
        return False
    if isinstance(expr, cst.Name):
        value = single_binding_value(analysis, expr)
        if isinstance(value, cst.Dict):
            return _dict_on_host(analysis, expr, value, depth, explicit, reaching)
        if value is None:
            value = _iterated(analysis, expr)
        if value is None and reaching:
            value = reaching_value(analysis, expr)
        return value is not None and _made_on_host(analysis, value, depth + 1, explicit,
                                                   reaching)
    if isinstance(expr, (cst.Subscript, cst.Attribute)):
        # ids[:, :77], inputs["input_ids"], inputs.input_ids, ids.T: where ids is
        return _made_on_host(analysis, expr.value, depth + 1, explicit, reaching)
    if explicit and isinstance(expr, (cst.Comparison, cst.BinaryOperation,
                                      cst.UnaryOperation)):
        # (scores > 0), scores * 2, -scores: on the host when every tensor operand is (a
        # 0-dim CPU tensor met by a device tensor gives a device tensor). Only for
        # placed_on_host: NSY202 and NSY906 rely on certainly_on_host as it was.
        return _host_operands(analysis, expr, depth, explicit)
    if not isinstance(expr, cst.Call):
        return False
    if _is_tokenizer_call(analysis, expr):
        return True
    qualified = analysis.md.qualified_names(expr.func)
    if qualified & T.CPU_FACTORIES:
        device = keyword_arg(expr, "device")
        if device is None:
            data = positional_args(expr)[:1] if qualified & T.DATA_FACTORIES else []
            known = "torch.as_tensor" in qualified
            return not explicit and not _default_device_changed(analysis) and all(
                _holds_no_tensor(analysis, d, depth, known) for d in data)
        return _is_cpu(analysis, device)
    if "builtins.reversed" in qualified and len(expr.args) == 1:
        return _made_on_host(analysis, expr.args[0].value, depth + 1, explicit, reaching)
    if qualified & T.KEEPS_DEVICE_FUNCTIONS:
        # torch.sigmoid(t.cpu()), torch.argmax(t.cpu(), dim=-1): where their one tensor is
        args = positional_args(expr)
        return bool(args) and all(analysis.kind(a) is Kind.HOST for a in args[1:]) and all(
            analysis.kind(k.value) is Kind.HOST for k in expr.args if k.keyword is not None
        ) and _made_on_host(analysis, args[0], depth + 1, explicit, reaching)
    if isinstance(expr.func, cst.Attribute) and (
        call_name(expr) in ("cpu", "numpy") and not expr.args
        or call_name(expr) == "to" and _moves_to_cpu(analysis, expr)
    ):
        return True
    if isinstance(expr.func, cst.Attribute) and (
            call_name(expr) in T.SAME_DEVICE_METHODS or call_name(expr) in T.KEEPS_DEVICE_METHODS
            or call_name(expr) == "to" and _casts_only(analysis, expr)):
        return _made_on_host(analysis, expr.func.value, depth + 1, explicit, reaching)
    if isinstance(expr.func, cst.Name):
        definition = analysis.tensors._local_definition(expr.func)
        if isinstance(definition, cst.FunctionDef):
            return _returns_on_host(analysis, definition, depth, explicit, reaching)
    return False


def _holds_no_tensor(analysis: ModuleAnalysis, data: cst.BaseExpression, depth: int,
                     known: bool) -> bool:
    """Whether the data given to ``torch.tensor`` (or another of ``T.DATA_FACTORIES``)
    holds no tensor: the result is then a CPU tensor, made without reading a device.

    A tensor keeps its device through ``torch.tensor(t)``; a list of tensors
    (``torch.tensor([x[0], y[-1]])``) makes a CPU tensor by reading every element.
    Anything else, an attribute nothing is known of included (``result.tokens``), is
    taken for host data: ``torch.tensor`` of a tensor is rare, and PyTorch warns against
    it. With ``known`` (``torch.as_tensor``, the way to take "a tensor or a list" without
    a copy, so often given a tensor) the data must be known to be host data."""
    kind = analysis.kind(data)
    if depth > 8 or kind is Kind.TENSOR or known and kind is not Kind.HOST:
        return False
    if isinstance(data, cst.Name):
        value = single_binding_value(analysis, data)
        return value is None or _holds_no_tensor(analysis, value, depth + 1, known)
    if isinstance(data, (cst.List, cst.Tuple, cst.Set)):
        return all(_holds_no_tensor(analysis, element.value, depth + 1, known)
                   for element in data.elements)
    if isinstance(data, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        return _holds_no_tensor(analysis, data.elt, depth + 1, known)
    return True


def _returns_on_host(analysis: ModuleAnalysis, func: cst.FunctionDef, depth: int,
                     explicit: bool, reaching: bool) -> bool:
    """Whether every value a function of this file returns is made on the host (at least
    one ``return value``; no ``yield``): nanoGPT's ``estimate_loss()`` returns a dict of
    ``torch.zeros(eval_iters).mean()``. A decorated function may return something else."""
    memo = analysis.memo("_host.returns_on_host")
    key = (id(func), explicit, reaching)
    if key not in memo:
        memo[key] = False  # a recursive call meets False: not proven
        memo[key] = _compute_returns_on_host(analysis, func, depth, explicit, reaching)
    return bool(memo[key])


def _compute_returns_on_host(analysis: ModuleAnalysis, func: cst.FunctionDef, depth: int,
                             explicit: bool, reaching: bool) -> bool:
    if func.decorators and not all(
            analysis.md.qualified_names(d.decorator.func if isinstance(
                d.decorator, cst.Call) else d.decorator) & _TRANSPARENT_DECORATORS
            for d in func.decorators):
        return False
    own = own_code_nodes(func, (cst.Return, cst.Yield), in_lambdas=False)
    returns = [node for node in own if isinstance(node, cst.Return)]
    yields = any(isinstance(node, cst.Yield) for node in own)
    values = [r.value for r in returns if r.value is not None]
    return bool(values) and not yields and all(
        _made_on_host(analysis, v, depth + 1, explicit, reaching) for v in values)


#: Decorators that return the function they decorate, or one returning the same values.
_TRANSPARENT_DECORATORS = frozenset({
    "torch.no_grad", "torch.inference_mode", "torch.enable_grad", "functools.wraps",
    "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode",
})


def _dict_on_host(analysis: ModuleAnalysis, name: cst.Name, display: cst.Dict, depth: int,
                  explicit: bool, reaching: bool) -> bool:
    """Whether a dict bound once (``out = {}``, ``out = {"a": x}``) holds only values made
    on the host: each value of the display and each ``out[key] = value`` is, and the name
    is used in no other way than those stores, loads of ``out[key]`` and ``return out``
    (no ``out.update(...)``, no passing it on, no ``out[key] += ...``)."""
    values: list[cst.BaseExpression] = []
    for element in display.elements:
        if not isinstance(element, cst.DictElement):
            return False  # {**other}
        values.append(element.value)
    access = analysis.md.access(name)
    if access is None:
        return False
    md = analysis.md
    for referent in access.referents:
        for use in referent.references:
            node = use.node
            parent = md.parent(node)
            if isinstance(parent, cst.Return):
                continue
            if not (isinstance(parent, cst.Subscript) and parent.value is node):
                return False
            holder = md.parent(parent)
            if isinstance(holder, cst.AssignTarget):
                assign = md.parent(holder)
                if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
                    return False
                values.append(assign.value)
            elif isinstance(holder, (cst.AugAssign, cst.Del)) or isinstance(
                    holder, cst.AnnAssign) and holder.target is parent:
                return False
    return bool(values) and all(
        _made_on_host(analysis, v, depth + 1, explicit, reaching) for v in values)


def _host_operands(analysis: ModuleAnalysis, expr: cst.BaseExpression, depth: int,
                   explicit: bool) -> bool:
    """Whether an operation's tensor operands are all made on the host (at least one), the
    others being numbers or host names."""
    if isinstance(expr, cst.Comparison):
        operands = [expr.left, *(c.comparator for c in expr.comparisons)]
    elif isinstance(expr, cst.BinaryOperation):
        operands = [expr.left, expr.right]
    else:
        operands = [expr.expression]  # type: ignore[attr-defined]
    tensors = 0
    for operand in operands:
        if isinstance(operand, (cst.Integer, cst.Float)):
            continue
        if _made_on_host(analysis, operand, depth + 1, explicit):
            tensors += 1
        elif not (isinstance(operand, (cst.Name, cst.Attribute))
                  and analysis.kind(operand) is Kind.HOST):
            return False
    return tensors > 0


def _default_device_changed(analysis: ModuleAnalysis) -> bool:
    """Whether the module may make tensors on another device by default:
    ``torch.set_default_device("cuda")``, ``with torch.device("cuda"):``. Then a factory
    without ``device=`` is not known to make a CPU tensor."""
    known = analysis.memo("host.default_device_changed")
    if None not in known:
        known[None] = any(
            analysis.md.qualified_names(call.func) & {
                "torch.set_default_device", "torch.set_default_tensor_type"}
            or (isinstance(analysis.md.parent(call), cst.WithItem)
                and analysis.md.qualified_names(call.func) & {"torch.device"})
            for call in analysis.md.nodes(cst.Call))
    return bool(known[None])


def _is_tokenizer_call(analysis: ModuleAnalysis, call: cst.Call) -> bool:
    """``tokenizer(text, return_tensors="pt")``, ``self.tokenizer_2.encode(...,
    return_tensors="pt")``: Hugging Face tokenizers make CPU tensors."""
    tensors = keyword_arg(call, "return_tensors")
    if not (isinstance(tensors, cst.SimpleString) and tensors.evaluated_value == "pt"):
        return False
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in T.TOKENIZER_METHODS:
        func = func.value
    name = func.attr.value if isinstance(func, cst.Attribute) else (
        func.value if isinstance(func, cst.Name) else "")
    return "tokenizer" in name.lower() or "processor" in name.lower()


def reaching_value(analysis: ModuleAnalysis, name: cst.Name) -> cst.BaseExpression | None:
    """The value of the one ``name = value`` that reaches this use of ``name``, when the name
    is bound more than once: the nearest earlier statement of an enclosing block that is a
    plain ``name = value``, with no other binding of the name between it and the use, and
    none in a loop that holds the use but not that statement (a later binding in the loop
    would reach the use on the next pass). ``ids = tok(...).input_ids`` then
    ``ids = ids.to(device)`` below the use: the tokenizer's CPU tensor reaches it."""
    access = analysis.md.access(name)
    if access is None or access.scope is None:
        return None
    bindings = [a.node for a in access.scope.assignments[name.value]]
    if not bindings:
        return None
    # Each binding with the ids of the nodes it lies in, itself included, and those of
    # all of them: "is a binding in this statement" is then a look-up, not a walk up
    # from every binding for every statement of a long block.
    inside = _ids_around(analysis, bindings)
    unions = analysis.memo("_host.ids_around_any")
    key = (id(access.scope), name.value)
    around_any = unions.get(key)
    if around_any is None:
        around_any = unions[key] = frozenset().union(*inside)
    loops: list[cst.CSTNode] = []
    node: cst.CSTNode = name
    while True:
        found = _block_above(analysis, node)
        if found is None:
            return None
        block, child, between = found
        loops.extend(between)
        body = list(block.body)
        index = next((i for i, item in enumerate(body) if item is child), None)
        if index is None:
            return None
        for position in range(index - 1, -1, -1):
            earlier = body[position]
            value = _plain_assignment(earlier, name.value)
            if value is None:
                if id(earlier) in around_any:
                    return None  # bound another way (a loop, a with, a branch): unknown
                continue
            later = {id(c) for c in body[position + 1:index + 1]} | {id(c) for c in loops}
            if any(id(earlier) not in ids and not later.isdisjoint(ids) for ids in inside):
                return None  # another binding between, or in a loop around the use
            return value
        node = block


_Above = tuple[cst.CSTNode, cst.CSTNode, tuple[cst.CSTNode, ...]]
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef,
           cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _block_above(analysis: ModuleAnalysis, node: cst.CSTNode) -> _Above | None:
    """The nearest block (indented block or module) above ``node``, its child on the way,
    and the loops between; None when a function, class or comprehension comes first.
    Memoised along the path: an ``elif`` chain nests each test one level deeper, and a
    walk per use to the block would make the chain quadratic."""
    memo = analysis.memo("_host.block_above")
    md = analysis.md
    path: list[cst.CSTNode] = []
    current = node
    result: _Above | None = None
    while True:
        if id(current) in memo:
            result = memo[id(current)]  # type: ignore[assignment]
            if result is not None and isinstance(current, (cst.For, cst.While)):
                result = (result[0], result[1], (current, *result[2]))
            break
        path.append(current)
        parent = md.parent(current)
        if parent is None or isinstance(parent, _SCOPES):
            result = None
            break
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            result = (parent, current, ())
            break
        current = parent
    # Fill the memo from the top of the path down: a node's loops are the loops above it
    # on the way to the block (not the node itself).
    for below in reversed(path):
        memo[id(below)] = result
        if result is not None and isinstance(below, (cst.For, cst.While)):
            result = (result[0], result[1], (below, *result[2]))
    return memo[id(node)]  # type: ignore[return-value]


def _plain_assignment(statement: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    """``value`` when ``statement`` is the line ``name = value`` and nothing else."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(
            assign.targets[0].target, cst.Name) and assign.targets[0].target.value == name:
        return assign.value
    return None


def _ids_around(analysis: ModuleAnalysis, nodes: list[cst.CSTNode]) -> list[frozenset[int]]:
    """For each of ``nodes``, the ids of the node and of every node above it (memoised)."""
    memo = analysis.memo("_host.ids_around")
    found = []
    for node in nodes:
        ids = memo.get(id(node))
        if ids is None:
            ids = memo[id(node)] = frozenset(
                [id(node), *map(id, analysis.md.ancestors(node))])
        found.append(ids)
    return found  # type: ignore[return-value]


def _only_binding(analysis: ModuleAnalysis, name: cst.Name) -> cst.CSTNode | None:
    """The node of the only binding of ``name`` in its scope, or None."""
    access = analysis.md.access(name)
    if access is None or access.scope is None:
        return None
    assignments = list(access.scope.assignments[name.value])
    return getattr(assignments[0], "node", None) if len(assignments) == 1 else None


def _iterated(analysis: ModuleAnalysis, name: cst.Name) -> cst.BaseExpression | None:
    """The iterable of the only ``for`` (or comprehension) that binds ``name``: its
    target, or one of the targets of ``for a, b in zip(xs, ys)`` (``ys`` for ``b``) or of
    ``for i, x in enumerate(xs)`` (``xs`` for ``x``)."""
    node = _only_binding(analysis, name)
    holder = analysis.md.parent(node) if node is not None else None
    if isinstance(holder, (cst.For, cst.CompFor)) and holder.target is node:
        return holder.iter
    element = holder if isinstance(holder, cst.Element) else None
    targets = analysis.md.parent(element) if element is not None else None
    loop = analysis.md.parent(targets) if isinstance(targets, (cst.Tuple, cst.List)) else None
    if not (isinstance(loop, (cst.For, cst.CompFor)) and loop.target is targets
            and isinstance(loop.iter, cst.Call)):
        return None
    assert isinstance(targets, (cst.Tuple, cst.List))
    position = next(i for i, e in enumerate(targets.elements) if e is element)
    if any(isinstance(e, cst.StarredElement) for e in targets.elements) or any(
            a.star or a.keyword is not None and a.keyword.value != "strict"
            for a in loop.iter.args):
        return None
    qualified = analysis.md.qualified_names(loop.iter.func)
    iterables = positional_args(loop.iter)
    if "builtins.zip" in qualified and len(iterables) == len(targets.elements):
        return iterables[position]
    if "builtins.enumerate" in qualified and len(iterables) == 1 and len(
            targets.elements) == 2 and position == 1:
        return iterables[0]
    return None


def _moves_to_cpu(analysis: ModuleAnalysis, call: cst.Call) -> bool:
    device = keyword_arg(call, "device")
    candidates = ([device] if device is not None else []) + positional_args(call)[:1]
    return any(_is_cpu(analysis, c) for c in candidates)


def _casts_only(analysis: ModuleAnalysis, call: cst.Call) -> bool:
    """Whether ``t.to(...)`` only changes the dtype (``t.to(torch.long)``,
    ``t.to(dtype=other.dtype)``): ``t``'s device is kept. A device, or a tensor whose
    device and dtype are taken (``t.to(other)``), may move it."""
    dtypes = [a.value for a in call.args
              if a.keyword is None or a.keyword.value == "dtype"]
    others = {a.keyword.value for a in call.args if a.keyword is not None} - {
        "dtype", "non_blocking", "copy", "memory_format"}
    return len(dtypes) == 1 and not others and not any(
        a.star for a in call.args) and _is_dtype(analysis, dtypes[0])


def _is_dtype(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Attribute) and expr.attr.value == "dtype":
        return True  # other.dtype
    return bool(analysis.md.qualified_names(expr) & T.TORCH_DTYPES)


def _is_cpu(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value == "cpu"
    if isinstance(expr, cst.Call) and analysis.md.qualified_names(expr.func) & {"torch.device"}:
        args = positional_args(expr)
        return len(args) == 1 and _is_cpu(analysis, args[0])
    return False


def _has_transfer(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is already on the host: a transfer in its chain, or a name bound
    once to one (``image = t.cpu()``, then ``image.numpy()``)."""
    while True:
        if isinstance(expr, cst.Name):
            value = single_binding_value(analysis, expr)
            if value is None:
                return False
            expr = value
        elif isinstance(expr, cst.Call):
            if host_transfer(analysis, expr) is not None:
                return True
            if not isinstance(expr.func, cst.Attribute):
                return False
            expr = expr.func.value
        elif isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        else:
            return False


def is_host_buffer(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """A CPU tensor or a numpy array: ``torch.zeros(n)`` without a device, ``x.cpu()``,
    ``np.zeros(n)``, bound once to a name."""
    if not isinstance(expr, cst.Name):
        return False
    if analysis.tensors.value(expr) is Value.ARRAY:
        return True
    value = single_binding_value(analysis, expr)
    if not isinstance(value, cst.Call):
        return False
    if call_name(value) == "cpu" or (call_name(value) == "to" and _moves_to_cpu(analysis,
                                                                              value)):
        return True
    if _is_tokenizer_call(analysis, value) and call_name(value) != "encode":
        # A BatchEncoding, a mapping of CPU tensors: `enc[key] = value.to(device)` stores
        # a reference and copies nothing into it (only `encode` gives a tensor).
        return False
    return _made_on_host(analysis, value, 0)


def loaded_to_device(analysis: ModuleAnalysis, name: cst.Name) -> str | None:
    """The text of a binding of ``name`` (in its scope) whose value is cut from what
    ``torch.load(..., map_location=X)`` returns, ``X`` not the CPU: ``best_val_loss =
    checkpoint['best_val_loss']`` with ``checkpoint = torch.load(path,
    map_location=device)``. ``map_location`` moves every tensor loaded to ``X``; None when
    there is no such binding."""
    access = analysis.md.access(name)
    if access is None or access.scope is None:
        return None
    # The answer is the scope's, not the use's: once per (scope, name), or every use of a
    # name a long function rebinds again and again walks all its bindings (quadratic).
    memo = analysis.memo("host.loaded_to_device")
    key = (id(access.scope), name.value)
    if key not in memo:
        memo[key] = _loaded_to_device(analysis, access.scope, name.value)
    return memo[key]  # type: ignore[return-value]


def _loaded_to_device(analysis: ModuleAnalysis, scope: object, name: str) -> str | None:
    md = analysis.md
    for assignment in scope.assignments[name]:  # type: ignore[attr-defined]
        assign = assignment_of(md, getattr(assignment, "node", None))
        if assign is None:
            continue
        value: cst.BaseExpression = assign.value
        if not isinstance(value, (cst.Subscript, cst.Attribute)):
            continue
        while isinstance(value, (cst.Subscript, cst.Attribute)):
            value = value.value
        loads = [value] if isinstance(value, cst.Call) else _bound_values(analysis, value)
        if any(_loads_to_device(analysis, load) for load in loads):
            return md.code(assign).strip()
    return None


def _bound_values(analysis: ModuleAnalysis, name: cst.BaseExpression) -> list[cst.Call]:
    """The calls bound to ``name`` by plain assignments in its scope (any of them)."""
    access = analysis.md.access(name) if isinstance(name, cst.Name) else None
    if access is None or access.scope is None:
        return []
    calls = []
    for assignment in access.scope.assignments[name.value]:  # type: ignore[attr-defined]
        assign = assignment_of(analysis.md, getattr(assignment, "node", None))
        if assign is not None and isinstance(assign.value, cst.Call):
            calls.append(assign.value)
    return calls


def _loads_to_device(analysis: ModuleAnalysis, call: cst.Call) -> bool:
    """``torch.load(path, map_location=device)`` with a device that may not be the CPU: a
    name or attribute (``device``, ``args.device``), a string or ``torch.device(...)`` other
    than the CPU. A callable (``lambda storage, loc: storage``) is not counted."""
    if "torch.load" not in analysis.md.qualified_names(call.func):
        return False
    location = keyword_arg(call, "map_location")
    if location is None:
        args = positional_args(call)
        location = args[1] if len(args) > 1 else None
    if isinstance(location, (cst.Name, cst.Attribute)):
        return location.value != "None" if isinstance(location, cst.Name) else True
    if isinstance(location, cst.SimpleString) or isinstance(location, cst.Call) and (
            analysis.md.qualified_names(location.func) & {"torch.device"}):
        return not _is_cpu(analysis, location)
    return False


def iterated_tensor(analysis: ModuleAnalysis, name: cst.Name) -> tuple[str, str] | None:
    """When ``name`` is bound only as the element of a loop over a tensor that the analysis
    does not type itself, (the tensor's text, the evidence that it is one); else None.

    The loop is ``for w in X``, ``for i, w in enumerate(X)`` or ``reversed(X)`` (a ``for``
    statement or a comprehension), and the evidence one of:

    * ``X`` is a parameter of a function of this file that is only ever called, with a
      tensor in that place at every call (``poly_desc(fc.weight.view(-1), fc.bias)``), and
      not only with tensors made on the host;
    * ``X`` is bound once to ``model.generate(...)`` or an index of it, ``model`` a module
      (``model.eval()`` or ``model.train()`` is called on it; tensors have neither):
      ``generate`` returns a tensor of token ids in Hugging Face models, nanoGPT and
      minGPT.
    """
    md = analysis.md
    node = _only_binding(analysis, name)
    holder = md.parent(node) if node is not None else None
    position = None
    if isinstance(holder, cst.Element):
        target = md.parent(holder)
        if not isinstance(target, cst.Tuple) or len(target.elements) != 2:
            return None
        position = 0 if target.elements[0] is holder else 1
        holder = md.parent(target)
        node = target
    if not isinstance(holder, (cst.For, cst.CompFor)) or holder.target is not node:
        return None
    iterable = holder.iter
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and len(
            iterable.args) == 1 and iterable.args[0].keyword is None:
        wrapper = iterable.func.value
        if wrapper == "enumerate" and position == 1 or wrapper == "reversed" and (
                position is None):
            iterable = iterable.args[0].value
        else:
            return None
    elif position is not None:
        return None
    if not isinstance(iterable, cst.Name) or analysis.kind(iterable) is not Kind.UNKNOWN:
        return None
    evidence = _tensor_by_call_sites(analysis, iterable) or _generated_ids(analysis, iterable)
    return (iterable.value, evidence) if evidence else None


def _tensor_by_call_sites(analysis: ModuleAnalysis, name: cst.Name) -> str:
    """The evidence when ``name`` is a parameter of a function of this file that every
    call passes a tensor (see :func:`iterated_tensor`); "" otherwise."""
    md = analysis.md
    access = md.access(name)
    referents = list(access.referents) if access is not None else []
    if len(referents) != 1:
        return ""
    holder = getattr(referents[0], "node", None)  # the Param itself
    if not isinstance(holder, cst.Param) or holder.star or holder.default is not None:
        return ""
    params_node = md.parent(holder)
    func = md.parent(params_node) if isinstance(params_node, cst.Parameters) else None
    if not isinstance(func, cst.FunctionDef) or not any(
            p is holder for p in params_node.params):
        return ""
    index = next(i for i, p in enumerate(params_node.params) if p is holder)
    scope = md.scope(func)
    if scope is None:
        return ""
    definitions = list(scope.assignments[func.name.value])
    if len(definitions) != 1 or getattr(definitions[0], "node", None) is not func:
        return ""
    passed: list[cst.BaseExpression] = []
    for use in definitions[0].references:
        call = md.parent(use.node)
        if not (isinstance(call, cst.Call) and call.func is use.node):
            return ""  # passed on, stored, decorated...: other callers are unknown
        argument = None
        for position, arg in enumerate(call.args):
            if arg.star:
                return ""
            if arg.keyword is None and position == index or (
                    arg.keyword is not None and arg.keyword.value == name.value):
                argument = arg.value
        if argument is None or analysis.kind(argument) is not Kind.TENSOR:
            return ""
        passed.append(argument)
    if not passed or all(certainly_on_host(analysis, a) for a in passed):
        return ""
    shown = next(a for a in passed if not certainly_on_host(analysis, a))
    return (f"every call of `{func.name.value}` passes a tensor there, "
            f"`{md.code(shown).strip()}`")


def _generated_ids(analysis: ModuleAnalysis, name: cst.Name) -> str:
    """The evidence when ``name`` is bound once to ``model.generate(...)`` (or an index of
    it), ``model`` a module of this file (see :func:`iterated_tensor`); "" otherwise."""
    value = single_binding_value(analysis, name)
    while isinstance(value, cst.Subscript):
        value = value.value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "generate" and isinstance(value.func.value, cst.Name)):
        return ""
    model = value.func.value
    access = analysis.md.access(model)
    referents = list(access.referents) if access is not None else []
    if not analysis.tensors.is_module(model) and not any(
            isinstance(analysis.md.parent(use.node), cst.Attribute)
            and analysis.md.parent(use.node).attr.value in ("eval", "train")  # type: ignore
            for referent in referents for use in referent.references):
        return ""
    return (f"`{name.value}` comes from `{model.value}.generate(...)`, a tensor of token ids "
            "for a module's generate")
