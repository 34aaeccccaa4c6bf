"""Worst-case cost: CPU seconds and peak memory of one file as it grows.

    python benchmarks/pathological.py [--only KIND,...] [--timeout S] [--json OUT]
                                      [--version LABEL=SRC ...]

Generates synthetic files that are pathological for an analysis whose cost grows
faster than its input, and measures ``nosync-fix --check --no-cache -j 1`` on each
(one process, a fresh interpreter per file):

* ``sum``: one statement summing N reads, ``loss = a0.item() + a1.item() + ...``,
  N = 40, 80, 160, 320;
* ``function``: one function of N lines of training-loop statements (names bound
  again and again, reads, branches), N = 500, 1000, 2000, 4000;
* ``elif``: an ``if``/``elif`` chain of N device tests in ``forward``, N = 50 ... 400;
* ``elif-host``: the same with host tests (``mode == 3``) but the last, N = 50 ... 400;
* ``file``: a module of many small training functions and modules, 1, 2.5 and 5 MB.
* ``attr-chain``: a read at the end of one attribute chain N deep, N = 350 ... 2800
  (LibCST's parse, which this includes, is about 1.9 s of the deepest).

Reported per file: CPU seconds (user + system of the process), peak resident
memory (``ru_maxrss``), the number of findings, and the growth per doubling of the
input, ``(t2 / t1) ** (log 2 / log(n2 / n1))``: 2.0 is linear, 4.0 quadratic,
8.0 cubic. ``t`` there is the CPU time less that of a file of one line (the
interpreter's start-up and the imports, about 0.3 s), measured first by each
version. A run past ``--timeout`` is killed and shown as ``>T``.

With ``--version before=/path/to/old/src --version after=src`` every file is checked
by each version in turn (interleaved, so that the load of a shared machine falls on
both alike) and the findings of the versions are compared.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# -- the pathological files ------------------------------------------------------------------


def sum_of_reads(n: int) -> str:
    names = [f"a{i}" for i in range(n)]
    lines = ["import torch", "", "", "def train(model, loader):",
             '    w = torch.randn(8, device="cuda")',
             "    for batch in loader:",
             '        x = torch.randn(8, device="cuda") * w']
    lines += [f"        {name} = x[{i % 8}].sum()" for i, name in enumerate(names)]
    lines.append("        total = " + " + ".join(f"{name}.item()" for name in names))
    lines += ["        w = w - x * total", "        t = a0.item() * 2", "        w = w * t"]
    return "\n".join(lines) + "\n"


_LOOP_BLOCK = """\
        x = x.to(device, non_blocking=True)
        out = model(x)
        loss = criterion(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        if loss > best_loss:
            best_loss = loss.item()
        acc = (out.argmax(1) == y).float().mean()
        history.append(acc.item())
        grad_norm_{i} = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        writer.add_scalar("loss", loss.item(), step)
        scale_{i} = out.abs().max()
        out = out / scale_{i}.item()
        steps += 1
"""


def long_function(n: int) -> str:
    block = _LOOP_BLOCK.splitlines()
    head = ["import torch", "", "",
            "def train(model, loader, optimizer, criterion, writer, device):",
            "    total_loss = 0.0",
            "    best_loss = float('inf')",
            "    history = []",
            "    steps = 0",
            "    for step, (x, y) in enumerate(loader):"]
    body: list[str] = []
    i = 0
    while len(head) + len(body) + 1 < n:
        body += [line.format(i=i) for line in block]
        i += 1
    lines = head + body[: n - len(head) - 1] + ["    return total_loss, history"]
    return "\n".join(lines) + "\n"


def elif_chain(n: int, host: bool = False) -> str:
    """``if``/``elif`` tests of device values (``x[3].sum() > 3``); with ``host``, tests
    of a host value (``mode == 3``) and a last one of a device value."""
    lines = ["import torch", "", "", "class Net(torch.nn.Module):",
             "    def forward(self, x, mode):",
             "        x = torch.relu(x)"]
    for i in range(n):
        test = f"mode == {i}" if host and i < n - 1 else f"x[{i % 8}].sum() > {i}"
        lines += [f"        {'if' if i == 0 else 'elif'} {test}:", f"            y = x * {i}"]
    lines += ["        else:", "            y = x", "        return y"]
    return "\n".join(lines) + "\n"


def array_chain(n: int) -> str:
    """A numpy array handed down a chain of ``n`` names, each bound to the one after it,
    in a file with a store into a list in a loop: the pre-filter asks whether the list may
    be an array, and works out which names may hold one (a fixed point that once took a
    pass over every binding per link)."""
    lines = ["import numpy as np", "import torch", "", "", "def run(xs):", "    out = []"]
    lines += [f"    a{i} = a{i + 1} + 1" for i in range(n)]
    lines += [f"    a{n} = np.zeros(3)", "    for i, x in enumerate(xs):",
              "        out[i] = torch.relu(x)", "    return out, a0"]
    return "\n".join(lines) + "\n"


def copy_fan(n: int, depth: int = 4) -> str:
    """``depth`` names each bound ``n`` times to a copy of the next (``b0 = b1.clone()``
    n times, ``b1 = b2.clone()`` n times ...), the last a parameter, and a store into the
    first in a loop: the pre-filter asks whether the first may be a CPU tensor, which once
    took n to the power of ``depth`` steps."""
    lines = ["import torch", "", "", "def run(xs, y):"]
    for level in range(depth):
        lines += [f"    b{level} = b{level + 1}.clone()"] * n
    lines += [f"    b{depth} = y", "    for i, x in enumerate(xs):",
              "        b0[i] = torch.relu(x)"]
    return "\n".join(lines) + "\n"


def forward_fan(n: int, depth: int = 3) -> str:
    """In ``forward``, ``depth`` names each bound ``n`` times to a method of the next
    (``b0 = b1.abs()`` n times ...) and a test of the first: the pre-filter asks whether
    the test computes from a parameter of ``forward``, which once took n to the power of
    ``depth`` steps."""
    lines = ["import torch", "from torch import nn", "", "", "class M(nn.Module):",
             "    def forward(self, x):"]
    for level in range(depth):
        lines += [f"        b{level} = b{level + 1}.abs()"] * n
    lines += [f"        b{depth} = 1.0", "        if b0 > 0:", "            x = x + 1",
              "        return x"]
    return "\n".join(lines) + "\n"


def logger_fan(n: int, depth: int = 3) -> str:
    """``depth`` names each bound ``n`` times to the next (``l0 = l1`` n times ...), the
    last a parameter, and a logging call on the first in a loop: the pre-filter asks
    whether the first may be a logger, which once took n to the power of ``depth`` steps."""
    lines = ["import logging", "import torch", "", "", "def run(xs, y):"]
    for level in range(depth):
        lines += [f"    l{level} = l{level + 1}"] * n
    lines += [f"    l{depth} = y", "    for x in xs:", "        l0.info('%s', torch.relu(x))"]
    return "\n".join(lines) + "\n"


def attribute_chain(n: int) -> str:
    """A read at the end of an attribute chain ``n`` deep in a training loop
    (``loss.a.a ... .a.item()``): the qualified name of each attribute of a chain was
    worked out by spelling the chain below it and looking up every prefix of it, and the
    configuration test walked it again: quadratic in the depth."""
    chain = "loss" + ".a" * n
    lines = ["import torch", "", "", "def train(model, loader):", "    for x in loader:",
             "        loss = model(x)", f"        total = {chain}.item()",
             "        loss.backward()", "    return total"]
    return "\n".join(lines) + "\n"


_UNIT = '''

def train_{i}(model, loader, optimizer):
    total = 0.0
    for x, y in loader:
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
        if out.max() > 10:
            out = out / out.max().item()
    return total


class Block{i}(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        if h.sum() > 0:
            h = h * 2
        return h - h.mean().item()
'''


def big_file(megabytes: float) -> str:
    target = int(megabytes * 1_000_000)
    parts = ["import torch\n"]
    size, i = len(parts[0]), 0
    while size < target:
        unit = _UNIT.format(i=i)
        parts.append(unit)
        size += len(unit)
        i += 1
    return "".join(parts)


KINDS: dict[str, tuple[str, Callable[[float], str], tuple[float, ...]]] = {
    "sum": ("reads in one sum", lambda n: sum_of_reads(int(n)), (40, 80, 160, 320)),
    "function": ("lines in one function", lambda n: long_function(int(n)),
                 (500, 1000, 2000, 4000)),
    "elif": ("device tests in one elif chain", lambda n: elif_chain(int(n)),
             (50, 100, 200, 400)),
    "elif-host": ("host tests, then a device test, in one elif chain",
                  lambda n: elif_chain(int(n), host=True), (50, 100, 200, 400)),
    "file": ("MB in one file", big_file, (1, 2.5, 5)),
    "array-chain": ("names in one chain of array bindings", lambda n: array_chain(int(n)),
                    (250, 500, 1000, 2000)),
    "copy-fan": ("bindings of each of 4 names to a copy of the next",
                 lambda n: copy_fan(int(n)), (10, 20, 40, 80)),
    "forward-fan": ("bindings in forward of each of 3 names to a method of the next",
                    lambda n: forward_fan(int(n)), (40, 80, 160, 320)),
    "logger-fan": ("bindings of each of 3 names to the next, then a logging call",
                   lambda n: logger_fan(int(n)), (40, 80, 160, 320)),
    "attr-chain": ("attributes in one chain ending in a read",
                   lambda n: attribute_chain(int(n)), (350, 700, 1400, 2800)),
}

# -- measuring ------------------------------------------------------------------------------


def measure(path: Path, src: str, timeout: float, extra: list[str]) -> dict:
    """CPU seconds, peak RSS and findings of one ``--check`` process on ``path``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    env["NO_COLOR"] = "1"
    command = [sys.executable, "-m", "nosync_fix", "--check", "--no-cache", "--isolated",
               "--exit-zero", "-q", "-j", "1", *extra, str(path)]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, stdout=out, stderr=err)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - started > timeout:
                os.kill(process.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(process.pid, 0)
                timed_out = True
                break
            time.sleep(0.02)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    findings = [line for line in stdout.splitlines() if line.strip()]
    return {
        "cpu": usage.ru_utime + usage.ru_stime, "wall": wall,
        "peak_rss_mb": usage.ru_maxrss / 1024, "timed_out": timed_out,
        "returncode": process.returncode, "findings": len(findings),
        "digest": hashlib.sha256(stdout.encode()).hexdigest()[:12],
        "stderr": stderr.strip()[-300:],
    }


def _growth(n1: float, t1: float, n2: float, t2: float) -> float:
    return (t2 / t1) ** (math.log(2) / math.log(n2 / n1)) if t1 > 0 and t2 > 0 else math.nan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(KINDS),
                        help=f"comma-separated kinds ({', '.join(KINDS)})")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per run [300]")
    parser.add_argument("--version", action="append", default=[], metavar="LABEL=SRC",
                        help="a version to measure: a label and its src folder "
                             "[this checkout's src]")
    parser.add_argument("--sizes", help="override the sizes of a single --only kind, "
                                        "comma-separated")
    parser.add_argument("--json", dest="json_out", help="also write the figures here")
    parser.add_argument("--keep", help="write the generated files to this folder")
    parser.add_argument("extra", nargs="*", help="more options for nosync-fix (after --)")
    args = parser.parse_args()
    versions = [v.split("=", 1) for v in args.version] or [["this", str(ROOT / "src")]]
    for _, src in versions:
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True,
                       stdout=subprocess.DEVNULL)
    kinds = [k.strip() for k in args.only.split(",") if k.strip()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="nosync-patho-") as scratch:
        folder = Path(args.keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        empty = folder / "patho_empty.py"
        empty.write_text("import torch\n", encoding="utf-8")
        base = {}
        for label, src in versions:
            base[label] = min(measure(empty, src, args.timeout, args.extra)["cpu"]
                              for _ in range(3))
            print(f"{label:>8} start-up: cpu {base[label]:.2f} s", flush=True)
        for kind in kinds:
            what, make, sizes = KINDS[kind]
            if args.sizes and len(kinds) == 1:
                sizes = tuple(float(s) for s in args.sizes.split(","))
            for size in sizes:
                path = folder / f"patho_{kind}_{size:g}.py"
                path.write_text(make(size), encoding="utf-8")
                for label, src in versions:
                    figures = measure(path, src, args.timeout, args.extra)
                    row = {"kind": kind, "what": what, "size": size, "version": label,
                           "bytes": path.stat().st_size, **figures,
                           "net_cpu": max(figures["cpu"] - base[label], 0.01)}
                    rows.append(row)
                    print(_line(row, args.timeout), flush=True)
    print()
    _table(rows, versions, args.timeout)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"machine": _machine(), "start_up": base,
                                                   "rows": rows},
                                                  indent=2) + "\n", encoding="utf-8")
    return 0


def _cpu(row: dict, timeout: float) -> str:
    return f">{timeout:g}" if row["timed_out"] else f"{row['cpu']:.2f}"


def _line(row: dict, timeout: float) -> str:
    return (f"{row['version']:>8} {row['kind']:>8} {row['size']:>6g}: cpu {_cpu(row, timeout)} s,"
            f" peak {row['peak_rss_mb']:.0f} MB, {row['findings']} findings"
            + (f", exit {row['returncode']}: {row['stderr']}"
               if row["returncode"] not in (0, 1) and not row["timed_out"] else ""))


def _table(rows: list[dict], versions: list[list[str]], timeout: float) -> None:
    """One Markdown table: per kind and size, each version's CPU, growth and memory."""
    header = ["case", "size", "KB"]
    for label, _ in versions:
        header += [f"{label} cpu s", f"{label} ×/doubling", f"{label} peak MB",
                   f"{label} findings"]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    previous: dict[tuple[str, str], dict] = {}
    seen: list[tuple[str, float]] = []
    for row in rows:
        if (row["kind"], row["size"]) not in seen:
            seen.append((row["kind"], row["size"]))
    for kind, size in seen:
        cells = [kind, f"{size:g}", ""]
        for label, _ in versions:
            row = next(r for r in rows if r["kind"] == kind and r["size"] == size
                       and r["version"] == label)
            cells[2] = f"{row['bytes'] / 1000:.0f}"
            before = previous.get((kind, label))
            growth = ""
            if before is not None and not before["timed_out"] and not row["timed_out"]:
                growth = f"{_growth(before['size'], before['net_cpu'], size, row['net_cpu']):.1f}"
            cells += [_cpu(row, timeout), growth, f"{row['peak_rss_mb']:.0f}",
                      f"{row['findings']} ({row['digest']})"]
            previous[(kind, label)] = row
        print("| " + " | ".join(cells) + " |")


def _machine() -> dict:
    import importlib.metadata

    return {"python": platform.python_version(), "platform": platform.platform(),
            "cpus": os.cpu_count(), "libcst": importlib.metadata.version("libcst"),
            "load": os.getloadavg(), "maxrss_unit": "KiB",
            "rlimit_as": resource.getrlimit(resource.RLIMIT_AS)}


if __name__ == "__main__":
    sys.exit(main())
