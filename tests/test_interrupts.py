"""Stopping a run: Ctrl-C and a killed main process.

Ctrl-C stops a run within seconds and exits 130; no file is written after the signal,
and every file is either as it was or fixed whole. When the main process is killed
(SIGKILL: no chance to clean up), its workers end too and write nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import nosync_fix
from nosync_fix import fix_code

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SRC = str(Path(nosync_fix.__file__).parents[1])
FUNCTION = textwrap.dedent("""\
    def train_{i}(model, loader, optimizer):
        total = 0.0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
        return total


    """)
#: A file that takes a worker a noticeable time (some 0.1 s), so that a run of many
#: lasts long enough to be stopped in the middle.
SLOW = "import torch\nimport torch.nn.functional as F\n\n\n" + "".join(
    FUNCTION.format(i=i) for i in range(30))
FIXED = fix_code(SLOW).fixed.encode()
FILES = 48
#: Slack for the file system's clock, which lags the real one by a tick or so.
CLOCK_SLACK_NS = 100_000_000


@pytest.fixture
def tree(project: Path) -> Path:
    folder = project / "t"
    folder.mkdir()
    for i in range(FILES):
        (folder / f"f{i:02}.py").write_text(SLOW)
    return folder


def start(project: Path, jobs: int) -> subprocess.Popen[bytes]:
    """The command line on ``t/``, in a session of its own (a terminal's Ctrl-C goes to
    every process of the foreground group: the main process and its workers)."""
    return subprocess.Popen(
        [sys.executable, "-m", "nosync_fix", "--isolated", "--no-cache", "-j", str(jobs), "t"],
        cwd=project, env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": SRC},
        stdout=open(project / "out.txt", "wb"), stderr=open(project / "err.txt", "wb"),
        start_new_session=True, preexec_fn=_default_sigint)


def _default_sigint() -> None:
    """Ctrl-C as in a terminal, even when the tests run in the background (a shell
    starts background jobs with SIGINT ignored, and children inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_first_write(process: subprocess.Popen[bytes], tree: Path) -> None:
    deadline = time.monotonic() + 120
    while not any(p.read_bytes() == FIXED for p in tree.glob("*.py")):
        assert process.poll() is None, "the run ended before it was stopped"
        assert time.monotonic() < deadline, "no file was fixed within two minutes"
        time.sleep(0.01)


def written_after(tree: Path, moment_ns: int) -> list[str]:
    """The files of ``tree`` that were written after ``moment_ns`` (time.time_ns)."""
    return sorted(p.name for p in tree.iterdir()
                  if p.stat().st_mtime_ns > moment_ns + CLOCK_SLACK_NS)


def assert_whole(tree: Path) -> int:
    """Every file is as it was or fixed whole, no temporary file is left; how many are
    fixed."""
    names = sorted(p.name for p in tree.iterdir())
    assert names == [f"f{i:02}.py" for i in range(FILES)], names
    contents = [p.read_bytes() for p in tree.iterdir()]
    assert all(c in (SLOW.encode(), FIXED) for c in contents)
    return contents.count(FIXED)


def workers_of(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        return [int(child) for child in handle.read().split()]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_stops_at_once_writes_nothing_after_and_exits_130(project: Path, tree: Path,
                                                                jobs: int) -> None:
    process = start(project, jobs)
    wait_for_first_write(process, tree)
    signalled = time.time_ns()
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    try:
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    stopped_after = (time.time_ns() - signalled) / 1e9
    err = (project / "err.txt").read_text()
    assert process.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err, err
    assert stopped_after < 5
    time.sleep(0.5)  # a worker left behind would write now
    assert written_after(tree, signalled) == []
    assert 0 < assert_whole(tree) < FILES


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads /proc (Linux)")
def test_workers_end_with_a_killed_main_process(project: Path, tree: Path) -> None:
    process = start(project, 2)
    wait_for_first_write(process, tree)
    workers = workers_of(process.pid)
    assert len(workers) == 2
    killed = time.time_ns()
    process.kill()  # SIGKILL to the main process only
    process.wait()
    deadline = time.monotonic() + 5
    try:
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [w for w in workers if alive(w)]
        assert left == [], "workers still running after their main process was killed"
    finally:
        for worker in workers:
            if alive(worker):
                os.kill(worker, signal.SIGKILL)
    assert written_after(tree, killed) == []
    assert 0 < assert_whole(tree) < FILES
