"""Throughput of ``nosync-fix --check`` against LibCST's bare parse, on the same cores.

    python benchmarks/bench_throughput.py TREE... [--jobs N] [--repeat R] [--json OUT]

For the files that ``nosync-fix`` would check under TREE..., in one run:

1. *parse*: a fresh Python process parses every file with ``libcst.parse_module``
   in ``N`` worker processes (the same pool size as the check); of a notebook, the
   module of its code cells, which is what the check analyses;
2. *check*: ``nosync-fix --check -j N`` with an empty cache;
3. *cached*: the same command again, answered from the cache.

Reported: wall time of each, check/parse ratio, files per second, cached/check
ratio, CPU time (user + system) of each process tree, and the peak resident
memory of the check's whole process tree (the sum over the main process and its
workers, sampled every 20 ms from /proc). With ``--repeat R`` the three steps run
R times in turn and the median of each figure is reported. Nothing is written
to the trees (the cache goes to a temporary folder).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", help="folders (or files) to check")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                        help="worker processes for the check and the parse [all cores]")
    parser.add_argument("--repeat", type=int, default=1, help="repeat and take medians")
    parser.add_argument("--json", dest="json_out", help="also write the figures here")
    parser.add_argument("--parse-worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.parse_worker:
        return _parse_worker(Path(args.parse_worker), args.jobs)
    if not args.trees:
        parser.error("give at least one TREE")

    env = _environment()
    files = _discover(args.trees, env)
    size = sum(os.path.getsize(f) for f in files)
    runs = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="nosync-bench-") as scratch:
            listing = Path(scratch, "files.txt")
            listing.write_text("\n".join(files), encoding="utf-8")
            parse = _measure([sys.executable, __file__, "--parse-worker", str(listing),
                              "--jobs", str(args.jobs)], env)
            command = [sys.executable, "-m", "nosync_fix", "--check", "--isolated", "-q",
                       "--exit-zero", "--cache-dir", str(Path(scratch, "cache")),
                       "-j", str(args.jobs), *args.trees]
            check = _measure(command, env)
            cached = _measure(command, env)
            if check["stdout"] != cached["stdout"]:
                print("error: the cached run reported something else", file=sys.stderr)
                return 2
            runs.append({"parse": parse, "check": check, "cached": cached,
                         "findings": check["stdout"].count("\n")})

    def median(step: str, key: str) -> float:
        return statistics.median(r[step][key] for r in runs)

    figures = {
        "files": len(files), "bytes": size, "jobs": args.jobs, "repeat": args.repeat,
        "findings": runs[0]["findings"],
        "parse_wall_s": median("parse", "wall"), "parse_cpu_s": median("parse", "cpu"),
        "check_wall_s": median("check", "wall"), "check_cpu_s": median("check", "cpu"),
        "cached_wall_s": median("cached", "wall"), "cached_cpu_s": median("cached", "cpu"),
        "check_peak_rss_mb": median("check", "peak_rss_mb"),
        "cached_peak_rss_mb": median("cached", "peak_rss_mb"),
    }
    figures["ratio_check_to_parse"] = figures["check_wall_s"] / figures["parse_wall_s"]
    figures["ratio_check_to_parse_cpu"] = figures["check_cpu_s"] / figures["parse_cpu_s"]
    figures["files_per_second"] = len(files) / figures["check_wall_s"]
    figures["ratio_cached_to_check"] = figures["cached_wall_s"] / figures["check_wall_s"]
    figures["machine"] = _machine()
    _print(figures)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


def _environment() -> dict[str, str]:
    """The environment of every measured process: this checkout, with its bytecode.

    ``nosync_fix`` runs from compiled bytecode, as it does once installed (pip
    compiles at install time, and an editable install compiles on first use):
    a ``PYTHONDONTWRITEBYTECODE`` set around the benchmark would otherwise make
    every run, and every worker, compile the package's sources again.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                      env.get("PYTHONPATH")]))
    env["NO_COLOR"] = "1"
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    return env


def _discover(trees: list[str], env: dict[str, str]) -> list[str]:
    """The files the check will process (the same discovery code, run in a subprocess)."""
    code = ("import sys, json\n"
            "from nosync_fix.files import discover\n"
            "from nosync_fix.config import Settings\n"
            "files, _ = discover(sys.argv[1:], Settings())\n"
            "print(json.dumps(files))\n")
    out = subprocess.run([sys.executable, "-c", code, *trees], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def _measure(command: list[str], env: dict[str, str]) -> dict:
    """Run ``command``; wall time, CPU time of the tree and its peak total RSS."""
    before = os.times()
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    sampler = _RssSampler(process.pid)
    sampler.start()
    stdout, stderr = process.communicate()
    wall = time.perf_counter() - started
    sampler.stop()
    after = os.times()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} ... failed ({process.returncode}):\n"
                         f"{stderr[-2000:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system)
    return {"wall": wall, "cpu": cpu, "peak_rss_mb": sampler.peak / 2**20, "stdout": stdout}


class _RssSampler(threading.Thread):
    """Samples the summed resident memory of a process and all its descendants."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def run(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._halt.is_set():
            total = 0
            for pid in self._tree(self.pid):
                try:
                    with open(f"/proc/{pid}/statm") as handle:
                        total += int(handle.read().split()[1]) * page
                except (OSError, ValueError, IndexError):
                    pass
            self.peak = max(self.peak, total)
            self._halt.wait(0.02)

    @staticmethod
    def _tree(root: int) -> list[int]:
        found, todo = [], [root]
        while todo:
            pid = todo.pop()
            found.append(pid)
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as handle:
                        todo.extend(int(c) for c in handle.read().split())
            except OSError:
                pass
        return found


def _parse_worker(listing: Path, jobs: int) -> int:
    """Parse every listed file with LibCST in ``jobs`` processes, as the check would."""
    from concurrent.futures import ProcessPoolExecutor

    files = listing.read_text(encoding="utf-8").splitlines()
    chunk = max(1, min(8, len(files) // (jobs * 16)))
    if jobs <= 1:
        failures = sum(map(_parse_one, files))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            failures = sum(pool.map(_parse_one, files, chunksize=chunk))
    print(f"{len(files)} files, {failures} not parsed")
    return 0


def _parse_one(path: str) -> int:
    import libcst

    try:
        with open(path, "rb") as handle:
            source = handle.read()
        if path.endswith(".ipynb"):  # a notebook: the module of its code cells, as checked
            from nosync_fix.notebook import Notebook

            source = Notebook(source.decode("utf-8")).module
        libcst.parse_module(source)
    except Exception:  # noqa: BLE001 - a file LibCST rejects is counted, not fatal
        return 1
    return 0


def _machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    try:
        libcst_version = importlib.metadata.version("libcst")
    except importlib.metadata.PackageNotFoundError:
        libcst_version = "not installed"
    return {"cpu": cpu, "cores": str(os.cpu_count()), "memory": memory,
            "python": platform.python_version(), "libcst": libcst_version,
            "load_average_at_end": " ".join(f"{x:.2f}" for x in os.getloadavg())}


def _print(f: dict) -> None:
    m = f["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, {m['memory']}, Python {m['python']}, "
          f"libcst {m['libcst']} (load average at the end: {m['load_average_at_end']})")
    print(f"tree: {f['files']} files, {f['bytes'] / 1e6:.1f} MB; {f['jobs']} worker "
          f"processes for both the parse and the check; median of {f['repeat']} run(s)")
    print(f"libcst parse        {f['parse_wall_s']:8.2f} s wall  {f['parse_cpu_s']:8.2f} s cpu")
    print(f"nosync-fix --check  {f['check_wall_s']:8.2f} s wall  {f['check_cpu_s']:8.2f} s cpu"
          f"  ({f['findings']} findings, {f['files_per_second']:.0f} files/s)")
    print(f"  cached re-run     {f['cached_wall_s']:8.2f} s wall  {f['cached_cpu_s']:8.2f} s cpu")
    print(f"ratio check/parse   {f['ratio_check_to_parse']:8.2f} (wall)"
          f"  {f['ratio_check_to_parse_cpu']:8.2f} (cpu)    target <= 0.5")
    print(f"ratio cached/check  {f['ratio_cached_to_check']:8.2f} (wall)"
          f"                     target <= 0.10")
    print(f"peak RSS (tree)     {f['check_peak_rss_mb']:8.0f} MB (check)"
          f"  {f['cached_peak_rss_mb']:5.0f} MB (cached)     target <= 400 MB")


if __name__ == "__main__":
    sys.exit(main())
