"""NSY901 explicit-synchronize."""

from __future__ import annotations

import libcst as cst

from ..analysis.base import call_name, visit, walk
from ..prefilter import Signal
from ._helpers import short
from .base import Rule

_SYNCHRONIZE = frozenset({
    "torch.cuda.synchronize", "torch.mps.synchronize", "torch.xpu.synchronize",
    "torch.accelerator.synchronize", "torch.npu.synchronize", "torch.cpu.synchronize",
})
#: Builtins that hand a loop the items of their first argument.
_WRAPPERS = frozenset({"enumerate", "zip", "reversed", "iter"})
#: Builtins that make a loop's items and time nothing.
_PLAIN_ITERATORS = frozenset({"range", "sorted", "list", "tuple", "len", "filter", "map"})
_TIMERS = frozenset({
    "time.time", "time.perf_counter", "time.monotonic", "time.process_time", "time.time_ns",
    "time.perf_counter_ns", "time.monotonic_ns", "timeit.default_timer",
})


class ExplicitSynchronize(Rule):
    """
    ## What it does
    Reports explicit waits for the device on hot paths: `torch.cuda.synchronize()`
    (and its `mps`, `xpu` and `torch.accelerator` siblings), `stream.synchronize()`
    and `event.synchronize()` inside loops, `forward`, `*_step` and compiled
    functions. The message says whether the code around it measures time, the
    one common legitimate reason, or whether the loop's iterator is code it cannot
    see that may (a metric logger's `log_every(loader, ...)` timing each step).

    ## Why is this slow?
    A synchronize stops the host until the device has finished everything queued.
    Work on one stream already runs in order, so in a training loop the wait
    buys nothing: it only empties the device's queue, which then idles while
    Python prepares the next step.

    ## Example
    ```python
    import torch

    x = torch.randn(64, 64)
    for step in range(3):
        x = torch.tanh(x @ x)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    print(x.shape)
    ```

    ## Use instead
    ```python
    import torch

    x = torch.randn(64, 64)
    for step in range(3):
        x = torch.tanh(x @ x)
    print(x.shape)
    ```

    Remove it. To time steps, synchronizing is legitimate (host clocks would
    otherwise time only the launches), but cheaper ways exist: record
    `torch.cuda.Event(enable_timing=True)` pairs around the work and call
    `end.synchronize()` once, after the loop, before reading `elapsed_time`; or
    use `torch.profiler`.

    ## Fix safety
    There is no automatic fix: a synchronize can also order work with another
    process, another stream without events, or a host-side read of pinned
    memory written by a non-blocking copy. Those are rare in loops, but only you
    know.

    ## When not to apply
    When it times the step (see above), right before `time.perf_counter()` in a
    benchmark, or when it orders a non-blocking device-to-host copy that the
    host reads next.
    """

    code = "NSY901"
    name = "explicit-synchronize"
    summary = "`torch.cuda.synchronize()` in a loop: the host waits for nothing; remove it"
    fix_kind = "none"
    cost = "sync"
    triggers = ("synchronize(",)
    signals = Signal.SYNC

    def visit_Call(self, node: cst.Call) -> None:
        if node.args or call_name(node) != "synchronize":
            return
        qnames = self.md.qualified_names(node.func)
        if not (qnames & _SYNCHRONIZE) and (not isinstance(node.func, cst.Attribute) or any(
            q.startswith("torch.") for q in qnames
        )):
            return
        if self.analysis.hot.reason(node) is None:
            return  # once, outside the training loop: harmless
        what = short(node)
        when = "whenever it runs" if self.analysis.loops.periodic(node) else "on every step"
        if self._times(node):
            message = (f"`{what}` makes the host wait for the device {when}; it is "
                       "legitimate here only if it makes the timing around it correct; "
                       "cheaper: record `torch.cuda.Event(enable_timing=True)` pairs and "
                       "synchronize once after the loop, or use `torch.profiler`")
        elif self._beside_collectives(node):
            message = (f"`{what}` makes the host wait for the device {when}; it sits beside "
                       "`torch.distributed` calls, where it may order work with other "
                       "processes: keep it if a collective or another process depends on it, "
                       "remove it otherwise")
        elif (iterator := self._stepping_call(node)) is not None:
            message = (f"`{what}` makes the host wait for the device {when}, and nothing "
                       f"in the loop measures time, unless its iterator `{short(iterator)}` "
                       "does (a logger's `log_every` times each step): then this makes that "
                       "timing right, and CUDA events would be cheaper; otherwise remove it "
                       "(work on a stream already runs in order)")
        else:
            message = (f"`{what}` makes the host wait for the device {when}, and "
                       "nothing here measures time: remove it (work on a stream already "
                       "runs in order)")
        self.report(node, message)

    def _stepping_call(self, node: cst.Call) -> cst.Call | None:
        """The call that hands the enclosing ``for`` loop its items, when it is code
        nosync-fix cannot see (``metric_logger.log_every(loader, 10)``, also inside
        ``enumerate``/``zip``), which may time each step between its items."""
        loop = self.analysis.loops.enclosing_loop(node)
        iterable = loop.iter if isinstance(loop, cst.For) else None
        while isinstance(iterable, cst.Call) and call_name(iterable) in _WRAPPERS and (
                iterable.args):
            iterable = iterable.args[0].value
        if isinstance(iterable, cst.Call) and call_name(iterable) not in _PLAIN_ITERATORS:
            return iterable
        return None

    def _beside_collectives(self, node: cst.Call) -> bool:
        """Whether the enclosing function calls ``torch.distributed`` (a barrier, a collective)."""
        region = self.md.enclosing_function(node) or self.md.module
        return any(isinstance(n, cst.Call) and any(
            q.startswith("torch.distributed.") for q in self.md.qualified_names(n.func))
            for n, _ in walk(region))

    def _times(self, node: cst.Call) -> bool:
        """Whether the loop (or function) around ``node`` reads a clock or CUDA events."""
        region: cst.CSTNode | None = self.analysis.loops.enclosing_loop(node)
        if region is None:
            region = self.md.enclosing_function(node) or self.md.module
        finder = _TimerFinder(self)
        visit(region, finder)
        return finder.found


class _TimerFinder(cst.CSTVisitor):
    def __init__(self, rule: ExplicitSynchronize) -> None:
        self.rule = rule
        self.found = False

    def visit_Call(self, node: cst.Call) -> bool:
        if self.rule.md.qualified_names(node.func) & _TIMERS or call_name(node) in (
            "elapsed_time", "record"
        ):
            self.found = True
        return not self.found

