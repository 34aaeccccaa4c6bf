"""A hypothesis strategy for training-loop-like programs on which the rules fire.

hypothesmith's programs are valid Python but almost never read a tensor in a
loop, so the rules find nothing in them. These programs are built from the
shapes of real training code: loops over loaders and ranges, ``.item()`` reads
summed, compared, printed, collected and passed to meters, branches on tensors,
boolean masks, subscript stores, synchronisation, comprehensions, ``forward``
methods, ``*_step`` functions, ``torch.compile`` and cold functions. They are
meant to be analysed, not run.
"""

from __future__ import annotations

from hypothesis import strategies as st

TENSOR = st.sampled_from(["loss", "out", "x", "y", "pred", "logits", "t"])
HOST = st.sampled_from(["i", "step", "n", "count", "len(batch)", "args.lr", "3", "0.5"])
ACC = st.sampled_from(["total", "running", "count", "correct", "acc"])
NEW = st.sampled_from(["loss", "out", "pred", "t", "mask", "idx", "value", "v"])


@st.composite
def _expression(draw: st.DrawFn) -> str:
    t = draw(TENSOR)
    return draw(st.sampled_from([
        t, f"{t}.item()", f"float({t})", f"int({t})", f"{t}.sum()", f"{t}.mean().item()",
        f"({t} > 0).sum()", f"{t}.detach()", f"torch.isnan({t}).any()", f"{t}.tolist()",
        f"{t}.cpu()", f"{t}.numpy()", f"model({t})", f"F.relu({t})", f"{t}.shape[0]",
        f"{t}[0]", f"{t}[{t} > 0]", f"{t}.nonzero()", f"torch.where({t} > 0)",
        f"{t}.max()", draw(HOST), "step", "i * 2",
    ]))


@st.composite
def _condition(draw: st.DrawFn) -> str:
    left = draw(_expression())
    op = draw(st.sampled_from([">", "<", "==", "!=", ">=", "is", "is not"]))
    right = "None" if op.startswith("is") else draw(
        st.sampled_from(["0", "0.5", "threshold", "best", draw(HOST)]))
    condition = f"{left} {op} {right}"
    if draw(st.booleans()):
        condition = draw(st.sampled_from([f"not {condition}", f"{condition} and i > 2",
                                          f"{draw(HOST)} % 10 == 0 or {condition}",
                                          f"torch.isnan({draw(TENSOR)})"]))
    return condition


@st.composite
def _simple(draw: st.DrawFn) -> str:
    acc = draw(ACC)
    e = draw(_expression())
    t = draw(TENSOR)
    return draw(st.sampled_from([
        f"{draw(NEW)} = {e}",
        "loss = F.cross_entropy(model(x), y)",
        "loss = criterion(model(x), y)",
        f"{acc} += {e}",
        f"{acc} = {acc} + {e}",
        f"{acc} -= {t}.item()",
        f"best = min(best, {e})",
        f"best = max({t}.item(), best)",
        f"history.append({e})",
        f"meter.update({e}, x.size(0))",
        f"print({e})",
        f'print(f"step {{i}}: {{{e}:.3f}}")',
        f'print("loss %.3f" % {e})',
        f'logger.info("loss %s", {e})',
        f"writer.add_scalar('loss', {e}, step)",
        f"pbar.set_postfix(loss={e})",
        f"buf[i] = {e}",
        f"buf[{t} > 0] += 1",
        "torch.cuda.synchronize()",
        f"assert {draw(_condition())}",
        f"assert {t}.item() < 10, 'diverged'",
        f"values = [{draw(TENSOR)}.item() for _ in range(3)]",
        f"flags = [v for v in {t} if v > 0]",
        f"{t}.backward()",
        "optimizer.step()",
        "optimizer.zero_grad()",
        "step += 1",
        "continue",
        "pass",
    ]))


@st.composite
def _block(draw: st.DrawFn, indent: int, depth: int, in_loop: bool) -> list[str]:
    pad = "    " * indent
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["simple", "simple", "simple", "if", "for", "while",
                                     "with"] if depth < 2 else ["simple"]))
        if kind == "simple":
            statement = draw(_simple())
            if statement == "continue" and not in_loop:
                statement = "pass"
            lines.append(pad + statement)
        elif kind == "if":
            lines.append(f"{pad}if {draw(_condition())}:")
            lines += draw(_block(indent + 1, depth + 1, in_loop))
            if draw(st.booleans()):
                lines.append(f"{pad}else:")
                lines += draw(_block(indent + 1, depth + 1, in_loop))
        elif kind == "for":
            header = draw(st.sampled_from([
                "for x, y in loader:", "for i, (x, y) in enumerate(loader):",
                "for i in range(10):", "for batch in loader:", "async for x in stream:",
            ]))
            if header.startswith("async"):
                header = "for x in stream:"
            lines.append(pad + header)
            lines += draw(_block(indent + 1, depth + 1, True))
        elif kind == "while":
            lines.append(f"{pad}while {draw(_condition())}:")
            lines += draw(_block(indent + 1, depth + 1, True))
            lines.append(f"{pad}    break")
        else:
            lines.append(f"{pad}with torch.no_grad():")
            lines += draw(_block(indent + 1, depth + 1, in_loop))
    return lines


@st.composite
def _function(draw: st.DrawFn) -> list[str]:
    name = draw(st.sampled_from(["train", "train_step", "evaluate", "fit", "run", "validate",
                                 "collate_fn", "setup", "hot_loop"]))
    lines = []
    if draw(st.integers(0, 5)) == 0:
        lines.append("@torch.compile")
    lines.append(f"def {name}(model, loader, optimizer, criterion, args, threshold=0.5):")
    for init in draw(st.lists(st.sampled_from([
        "total = 0.0", "running = 0", "count = 0", "correct = 0", "acc = 0.0",
        "best = float('inf')", "history = []", "step = 0", "n = 10",
        "buf = torch.zeros(100)", "meter = AverageMeter()",
    ]), min_size=1, max_size=5, unique=True)):
        lines.append("    " + init)
    lines.append("    for i, (x, y) in enumerate(loader):" if draw(st.booleans())
                 else "    for x, y in loader:")
    lines += draw(_block(2, 1, True))
    lines += draw(_block(1, 1, False))
    lines.append("    return " + draw(st.sampled_from(["total", "best", "history", "None",
                                                        "count / max(n, 1)"])))
    return lines


@st.composite
def _module_class(draw: st.DrawFn) -> list[str]:
    base = draw(st.sampled_from(["torch.nn.Module", "nn.Module", "Dataset", ""]))
    lines = [f"class Net({base}):" if base else "class Net:",
             "    def __init__(self):",
             "        super().__init__()",
             "        self.scale = torch.ones(1)",
             "        self.training_steps = 0"]
    method = draw(st.sampled_from(["forward", "__getitem__", "helper", "_step"]))
    lines.append(f"    def {method}(self, x):")
    lines += draw(_block(2, 1, False))
    lines.append("        return x")
    return lines


@st.composite
def torch_programs(draw: st.DrawFn) -> str:
    """A module of imports, maybe a class, and one to three functions."""
    lines = ["import torch", "import torch.nn as nn", "import torch.nn.functional as F"]
    if draw(st.booleans()):
        lines.append("from torch.utils.data import Dataset")
    if draw(st.integers(0, 4)) == 0:
        lines.append("import numpy as np")
    lines.append("")
    if draw(st.booleans()):
        lines += draw(_module_class())
        lines.append("")
    for _ in range(draw(st.integers(1, 3))):
        lines += draw(_function())
        lines.append("")
    if draw(st.integers(0, 3)) == 0:
        lines += ["for epoch in range(3):", "    train(model, loader, optimizer, None, args)"]
        lines += draw(_block(1, 1, True))
    return "\n".join(lines) + "\n"
