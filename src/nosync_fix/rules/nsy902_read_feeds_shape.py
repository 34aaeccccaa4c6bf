"""NSY902 read-feeds-shape."""

from __future__ import annotations

import libcst as cst

from ..analysis import HostRead, Kind, ModuleAnalysis
from ..analysis.base import call_name, positional_args
from ..prefilter import Signal
from ._helpers import short
from ._host import certainly_on_host
from ._scalars import sole_binding_uses
from .base import Rule

#: torch functions whose size arguments (all positional ones, or ``size=``) set a shape.
_FACTORIES = frozenset({
    "torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn", "torch.arange",
    "torch.eye", "torch.full", "torch.linspace", "torch.logspace", "torch.randperm",
})
#: Functions and methods whose arguments after the tensor set a shape or a count of parts.
_SHAPE_FUNCTIONS = frozenset({
    "torch.split", "torch.narrow", "torch.topk", "torch.chunk", "torch.tensor_split",
    "torch.nn.functional.pad", "torch.nn.functional.interpolate", "torch.nn.functional.one_hot",
})
_SHAPE_METHODS = frozenset({
    "view", "reshape", "expand", "repeat", "narrow", "split", "chunk", "topk", "tile",
    "unflatten", "new_zeros", "new_ones", "new_empty", "new_full", "resize_", "unfold",
    "tensor_split",
})
#: Host functions a number may pass through on its way to a shape.
_PASS_THROUGH = frozenset({
    "builtins.int", "builtins.round", "builtins.max", "builtins.min", "builtins.abs",
    "math.ceil", "math.floor",
})
_ADVICE = {
    "range": "it sets a loop's trip count: loop to a static bound and mask the extra steps",
    "shape": "it sets a tensor's shape: pad to a static bound (a maximum length) and mask",
    "slice": "it sets a slice's length: slice to a static bound and mask",
    "lookup": "it indexes a Python container: keep the indices on the device and look "
              "them up once, where the host needs the result",
}


def read_use(analysis: ModuleAnalysis, read: HostRead) -> str | None:
    """"range", "shape", "slice", "index" (of a tensor) or "lookup" (in a Python container)
    when the read's value sets one, else None.

    Follows the value through host arithmetic and ``int``/``max``/``math.ceil``..., and
    through a variable bound once (``n = int(t)``; ``torch.zeros(n)``).
    """
    node: cst.CSTNode = read.node
    found = _use_of(analysis, node)
    if found is not None:
        return found
    holder = _through_host_math(analysis, node)
    parent = analysis.md.parent(holder)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(
        parent.targets[0].target, cst.Name
    ):
        for use in sole_binding_uses(analysis, parent.targets[0].target) or []:
            found = _use_of(analysis, use)
            if found is not None:
                return found
    return None


def _through_host_math(analysis: ModuleAnalysis, node: cst.CSTNode) -> cst.CSTNode:
    """The outermost expression that computes a host number from ``node``.

    Remembered for every node on the way up, so that the reads of one long sum of
    host numbers together cost linear time (each walked up the whole sum)."""
    md = analysis.md
    known = analysis.memo("nsy902.through_host_math")
    path: list[cst.CSTNode] = []
    while True:
        outer = known.get(node)
        if outer is not None:
            break
        path.append(node)
        parent = md.parent(node)
        if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)) and (
            analysis.kind(parent) is Kind.HOST
        ):
            node = parent
            continue
        if isinstance(parent, cst.Arg) and parent.keyword is None:
            call = md.parent(parent)
            if isinstance(call, cst.Call) and md.qualified_names(call.func) & _PASS_THROUGH:
                node = call
                continue
        outer = node
        break
    for passed in path:
        known[passed] = outer
    return outer  # type: ignore[return-value]


def _use_of(analysis: ModuleAnalysis, node: cst.CSTNode) -> str | None:
    md = analysis.md
    value = _through_host_math(analysis, node)
    parent = md.parent(value)
    if isinstance(parent, (cst.Element, cst.StarredElement)):  # a size tuple (n, 3)
        container = md.parent(parent)
        if isinstance(container, (cst.Tuple, cst.List)):
            parent = md.parent(container)
            value = container
    if isinstance(parent, cst.Arg):
        call = md.parent(parent)
        if isinstance(call, cst.Call):
            return _argument_use(analysis, call, parent)
        return None
    if isinstance(parent, cst.Slice):
        return "slice"
    if isinstance(parent, cst.Index):
        element = md.parent(parent)
        subscript = md.parent(element) if element is not None else None
        if isinstance(subscript, cst.Subscript) and not _is_store(analysis, subscript):
            return "index" if analysis.kind(subscript.value) is Kind.TENSOR else "lookup"
    return None


def _argument_use(analysis: ModuleAnalysis, call: cst.Call, arg: cst.Arg) -> str | None:
    qnames = analysis.md.qualified_names(call.func)
    if "builtins.range" in qnames:
        return "range"
    if qnames & _FACTORIES:
        if arg.keyword is None or arg.keyword.value in ("size", "steps", "n", "end", "start"):
            if "torch.full" in qnames and arg.keyword is None and call.args[-1] is arg and (
                len(positional_args(call)) > 1
            ):
                return None  # the fill value
            return "shape"
        return None
    if qnames & _SHAPE_FUNCTIONS:
        return "shape" if arg is not call.args[0] else None
    func = call.func
    if isinstance(func, cst.Attribute) and call_name(call) in _SHAPE_METHODS and (
        analysis.kind(func.value) is Kind.TENSOR
    ):
        if call_name(call) == "new_full" and arg is call.args[-1] and len(call.args) > 1:
            return None  # the fill value
        return "shape"
    return None


def _is_store(analysis: ModuleAnalysis, subscript: cst.Subscript) -> bool:
    parent = analysis.md.parent(subscript)
    return isinstance(parent, cst.AssignTarget) or (
        isinstance(parent, cst.AugAssign) and parent.target is subscript)


class ReadFeedsShape(Rule):
    """
    ## What it does
    Reports scalar reads whose value sets a shape, a trip count, a slice or an
    index: `torch.zeros(int(n))`, `for i in range(k.item())`, `x[: lengths.max().item()]`,
    `x.view(b, int(t))`, also through a variable (`n = int(t)`, then
    `torch.zeros(n)`). No fix: the host really needs these numbers, so the
    advice is to restructure. A tensor the analysis knows lives on the CPU
    (`torch.randint(n, (1,))`, see NSY906) is read without a wait: it is
    reported only in `forward` or a compiled function, where the read still
    breaks the graph.

    ## Why is this slow?
    The host waits for the device to produce the number, and a compiled graph
    breaks there (with `capture_scalar_outputs=True` the read itself no longer
    breaks, but every new value is a new shape). Shapes that depend on data
    also defeat CUDA graphs and memory planning.

    ## Example
    ```python
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    lengths = torch.tensor([3, 1, 2], device=device)
    tokens = torch.arange(12, device=device).reshape(3, 4)
    for step in range(2):
        longest = int(lengths.max())
        batch = tokens[:, :longest] * step
    print(batch.sum(dim=1))
    ```

    ## Use instead
    ```python
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    lengths = torch.tensor([3, 1, 2], device=device)
    tokens = torch.arange(12, device=device).reshape(3, 4)
    positions = torch.arange(tokens.shape[1], device=device)
    for step in range(2):
        padded = tokens * (positions < lengths.max()) * step
    print(padded.sum(dim=1))
    ```

    Pad to a static bound (here the tensor's own width, known on the host) and
    mask the extra positions. Under `torch.compile`, when the shape must follow
    the data, read it with `torch._dynamo.config.capture_scalar_outputs = True`
    and tell the compiler its range with `torch._check(0 < n)` and
    `torch._check(n <= max_len)`, so that one graph serves every value. An index
    needs no read at all: `x[t]` and `x.index_select(0, t)` accept the tensor.

    ## Fix safety
    There is no automatic fix: padding changes shapes the rest of the program
    sees, and only you know the static bound.

    ## When not to apply
    Outside hot paths (building a schedule once), and where the number is
    needed on the host anyway and read once per epoch.
    """

    code = "NSY902"
    name = "read-feeds-shape"
    summary = "A scalar read that sets a shape, range, slice or index: pad or bound it instead"
    fix_kind = "none"
    cost = "sync and graph break"
    triggers = (".item(", "float(", "int(", ".tolist(")
    signals = Signal.READ

    def visit_Call(self, node: cst.Call) -> None:
        read = self.analysis.host_read(node)
        if read is None or read.how == "bool":
            return
        use = read_use(self.analysis, read)
        if use is None:
            return
        waits = "waits for the device"
        if certainly_on_host(self.analysis, read.tensor):
            # A CPU tensor (`torch.randint(n, (1,), generator=g)`): no wait; but where
            # torch.compile traces, the read still breaks the graph.
            if not self.analysis.hot.in_traced_function(node):
                return
            waits = "breaks the graph (a CPU tensor: no wait for the device)"
        what = short(node)
        if use == "lookup":
            self.report(node, f"`{what}` {waits} because {_ADVICE[use]}")
            return
        if use == "index":
            self.report(node, f"`{what}` {waits} only to pick an element: index "
                              "with the tensor itself (`x[t]`, `x.index_select(0, t)`, "
                              "`torch.gather`), which needs no read")
            return
        self.report(node, f"`{what}` {waits} because {_ADVICE[use]}; under "
                          "torch.compile, read it with `capture_scalar_outputs=True` and "
                          "bound it with `torch._check`")
