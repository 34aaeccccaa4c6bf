"""The content-hash cache and parallel runs."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import nosync_fix
import nosync_fix.cache as cache_module
import nosync_fix.engine as engine
from nosync_fix.cache import Cache
from nosync_fix.cli import main
from nosync_fix.config import Settings
from nosync_fix.runner import Mode, run

SRC = str(Path(nosync_fix.__file__).parents[1])
TRAIN = textwrap.dedent("""\
    import torch


    def train(model, loader, optimizer):
        total = 0.0
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            total += loss.item()
        return total
    """)
UNSAFE = textwrap.dedent("""\
    import torch


    def train(model, loader):
        total = 0.0
        for batch in loader:
            total += model(batch).loss.item()
        return total
    """)
CLEAN = "import torch\n\nx = torch.ones(3)\n"


def invoke(*args: str):
    return CliRunner().invoke(main, ["--isolated", *args], catch_exceptions=False)


@pytest.fixture
def tree(project: Path) -> Path:
    for i in range(3):
        (project / f"train{i}.py").write_text(TRAIN)
    (project / "unsafe.py").write_text(UNSAFE)
    (project / "clean.py").write_text(CLEAN)
    (project / "broken.py").write_text("def f(:\n")
    return project


def cache_folder(project: Path) -> Path:
    """Where a run in ``project`` without a configuration keeps its cache."""
    return cache_module.default_folder(Settings(root=project))


def forbid_analysis(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def fail(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a cached file was analysed again")

    monkeypatch.setattr(engine, "process_source", fail)


def entries(folder: Path) -> dict[str, dict]:
    """The cache's entries, by key."""
    db = sqlite3.connect(folder / "cache.sqlite")
    try:
        return {key: json.loads(value) for key, value in db.execute(
            "SELECT key, value FROM entries")}
    finally:
        db.close()


def set_value(folder: Path, key: str, value: str) -> None:
    db = sqlite3.connect(folder / "cache.sqlite")
    with db:
        db.execute("UPDATE entries SET value = ? WHERE key = ?", (value, key))
    db.close()


@pytest.mark.parametrize("args", [["--check"], ["--check", "--output-format", "json"],
                                  ["--diff"], ["--check", "--statistics"]])
def test_second_run_is_answered_from_the_cache(tree: Path, monkeypatch, args) -> None:
    first = invoke(*args, ".")
    assert entries(cache_folder(tree))
    forbid_analysis(monkeypatch)
    second = invoke(*args, ".")
    assert (second.exit_code, second.output) == (first.exit_code, first.output)


def test_fix_mode_unchanged_files_are_hits(tree: Path, monkeypatch) -> None:
    first = invoke(".")
    assert first.exit_code == 2  # broken.py
    fixed = {p.name: p.read_text() for p in tree.glob("*.py")}
    assert fixed["train0.py"] != TRAIN and fixed["clean.py"] == CLEAN
    second = invoke(".")  # the fixed files are new bytes: analysed once more
    assert "Found 1 finding" in second.output
    forbid_analysis(monkeypatch)
    third = invoke(".")
    assert third.output == second.output
    assert {p.name: p.read_text() for p in tree.glob("*.py")} == fixed


def test_a_cached_fix_is_written(project: Path) -> None:
    path = project / "train.py"
    path.write_text(TRAIN)
    assert invoke("--diff", "train.py").exit_code == 1  # computes and caches the fix
    diff_cache = entries(cache_folder(project))
    assert invoke("train.py").exit_code == 0  # fix mode: same key as --diff, from the cache
    assert entries(cache_folder(project)) == diff_cache
    assert "total += loss.detach()" in path.read_text()


@pytest.mark.parametrize("change", ["bytes", "unsafe", "select", "all_paths", "tool", "python"])
def test_entries_are_never_stale(tree: Path, monkeypatch, change: str) -> None:
    invoke("--check", ".")
    calls = []
    real = engine.process_source

    def counting(source, filename, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(Path(filename).name)
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(engine, "process_source", counting)
    args = ["--check", "-j", "1", "."]  # one process, so that the calls are counted here
    if change == "bytes":
        (tree / "train1.py").write_text(TRAIN + "\n# edited\n")
    elif change == "unsafe":
        args.insert(0, "--unsafe-fixes")
    elif change == "select":
        args[:0] = ["--ignore", "NSY201"]
    elif change == "all_paths":
        args.insert(0, "--all-paths")
    elif change == "python":  # a parse error under 3.11 may be valid code under 3.12
        monkeypatch.setattr(cache_module, "python_tag", lambda: "cpython 3.99")
    else:
        monkeypatch.setattr(cache_module, "tool_fingerprint", lambda: "another version")
    invoke(*args)
    if change == "bytes":
        assert calls == ["train1.py"]
    else:
        assert len(calls) == 6


def test_corrupt_or_foreign_entries_are_ignored(tree: Path) -> None:
    first = invoke("--check", ".")
    folder = cache_folder(tree)
    found = entries(folder)
    keys = sorted(found)
    set_value(folder, keys[0], "{not json")
    set_value(folder, keys[1], json.dumps({**found[keys[1]], "key": "0" * 64}))
    set_value(folder, keys[2], json.dumps({**found[keys[2]], "findings": "nonsense"}))
    set_value(folder, keys[3], json.dumps({**found[keys[3]], "format": 0}))
    second = invoke("--check", ".")
    assert (second.exit_code, second.output) == (first.exit_code, first.output)


def test_a_broken_database_is_replaced(tree: Path) -> None:
    first = invoke("--check", ".")
    (cache_folder(tree) / "cache.sqlite").write_bytes(b"this is no database" * 100)
    for name in ("cache.sqlite-wal", "cache.sqlite-shm"):
        (cache_folder(tree) / name).unlink(missing_ok=True)
    second = invoke("--check", ".")
    assert (second.exit_code, second.output) == (first.exit_code, first.output)
    assert len(entries(cache_folder(tree))) == 6


def test_no_cache_reads_and_writes_nothing(tree: Path, monkeypatch) -> None:
    invoke("--no-cache", "--check", ".")
    assert not cache_folder(tree).exists()
    invoke("--check", ".")
    forbid_analysis(monkeypatch)
    with pytest.raises(AssertionError, match="analysed again"):
        invoke("--no-cache", "--check", ".")


def test_cache_dir_option_and_folder_markers(tree: Path, tmp_path: Path) -> None:
    folder = tmp_path / "elsewhere"
    invoke("--cache-dir", str(folder), "--check", ".")
    assert not cache_folder(tree).exists()
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172")


def test_cache_beside_the_configuration(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.nosync-fix]\nselect = ['NSY2']\n")
    (project / "pkg").mkdir()
    (project / "pkg" / "train.py").write_text(TRAIN)
    os.chdir(project / "pkg")
    CliRunner().invoke(main, ["--check", "train.py"], catch_exceptions=False)
    assert cache_folder(project).is_dir()
    assert not cache_folder(project / "pkg").exists()
    assert not list(project.rglob(".nosync_cache"))


def test_unwritable_cache_is_no_error(tree: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    result = invoke("--cache-dir", str(blocker / "cache"), "--check", ".")
    assert result.exit_code == 2  # broken.py only
    assert result.output.count("error:") == 1


def test_parse_errors_are_cached_internal_errors_are_not(tree: Path, monkeypatch) -> None:
    import nosync_fix.rules.nsy201_accumulate_on_device as rule

    def broken(self, *args):  # type: ignore[no-untyped-def]
        raise RuntimeError("bug")

    with monkeypatch.context() as patch:
        # (LibCST binds the visit_ methods once per class: patch what they call.)
        patch.setattr(rule.AccumulateOnDevice, "_candidate", broken)
        first = invoke("--check", ".")
    assert first.output.count("internal error") == 4
    stored = entries(cache_folder(tree)).values()
    assert [e["error"]["kind"] for e in stored if e["error"]] == ["parse"]
    second = invoke("--check", ".")
    assert "internal error" not in second.output and "broken.py: cannot parse" in second.output


def test_concurrent_runs_share_the_cache(tree: Path) -> None:
    for i in range(30):
        (tree / f"more{i}.py").write_text(TRAIN.replace("total", f"total{i}"))
    command = [sys.executable, "-m", "nosync_fix", "--isolated", "--check", "-j", "2", "."]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": SRC}
    procs = [subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [p.communicate() for p in procs]
    assert len({out for out, _ in outputs}) == 1
    assert [p.returncode for p in procs] == [2, 2, 2]
    db = sqlite3.connect(cache_folder(tree) / "cache.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    assert len(entries(cache_folder(tree))) == 36
    again = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    assert again.stdout == outputs[0][0]


def test_library_cache_round_trip(tree: Path) -> None:
    cache = Cache.for_settings(tree / "c", Settings())
    first = run(["."], Settings(), Mode.CHECK, cache=cache, with_edits=True)
    second = run(["."], Settings(), Mode.CHECK, cache=cache, with_edits=True)
    assert [(o.filename, o.result, o.error) for o in first] == [
        (o.filename, o.result, o.error) for o in second]


# -- parallel runs ---------------------------------------------------------------------------


def test_parallel_and_serial_runs_agree(tree: Path) -> None:
    for i in range(20):
        (tree / f"pkg{i % 3}" / f"m{i}.py").parent.mkdir(exist_ok=True)
        (tree / f"pkg{i % 3}" / f"m{i}.py").write_text(
            [TRAIN, UNSAFE, CLEAN, "x = (\n"][i % 4])
    results = {}
    for jobs in (1, 2, 3):
        outcomes = run(["."], Settings(), Mode.CHECK, jobs=jobs, with_edits=True)
        results[jobs] = [(o.filename, o.result, o.error) for o in outcomes]
    assert results[1] == results[2] == results[3]
    assert len(results[1]) == 26


def test_progress_counts_every_file(tree: Path) -> None:
    seen: list[tuple[int, int]] = []
    run(["."], Settings(), Mode.CHECK, jobs=2, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (6, 6)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_crashing_worker_fails_only_its_file(tree: Path, monkeypatch) -> None:
    for i in range(6):
        (tree / f"extra{i}.py").write_text(TRAIN)
    (tree / "crash.py").write_text(TRAIN)
    real = engine.process_source

    def dies_on_crash_py(source, filename, *args, **kwargs):  # type: ignore[no-untyped-def]
        if filename.endswith("crash.py"):
            os._exit(3)  # as a segfault in native code would end the worker
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(engine, "process_source", dies_on_crash_py)
    outcomes = run(["."], Settings(), Mode.CHECK, jobs=2)
    by_name = {Path(o.filename).name: o for o in outcomes}
    assert len(by_name) == 13
    assert by_name["crash.py"].error is not None
    assert "the analysis crashed" in by_name["crash.py"].error.message
    assert by_name["broken.py"].error is not None and by_name["broken.py"].error.kind == "parse"
    for name, outcome in by_name.items():
        if name not in ("crash.py", "broken.py"):
            assert outcome.error is None, (name, outcome.error)
    assert len(by_name["extra5.py"].result.findings) == 1


def test_entries_of_other_versions_are_dropped(tree: Path, monkeypatch) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(cache_module, "tool_fingerprint", lambda: "an older version")
        invoke("--check", ".")
    old = set(entries(cache_folder(tree)))
    invoke("--check", ".")
    new = set(entries(cache_folder(tree)))
    assert len(old) == len(new) == 6 and not old & new


def test_a_run_answered_from_the_cache_loads_neither_rules_nor_libcst(tree: Path) -> None:
    """What keeps a cached re-run near instant: choosing rules and keying the cache need
    only the rules' codes, which the registry knows from its module names."""
    command = [sys.executable, "-c",
               "import sys\n"
               "from nosync_fix.cli import main\n"
               "try:\n"
               "    main(['--check', '--exit-zero', '.'])\n"
               "except SystemExit:\n"
               "    pass\n"
               "loaded = [m for m in ('libcst', 'nosync_fix.engine', 'nosync_fix.rules.base')\n"
               "          if m in sys.modules]\n"
               "print('loaded:', *loaded, file=sys.stderr)\n"]
    env = {**os.environ, "NO_COLOR": "1"}
    first = subprocess.run(command, cwd=tree, capture_output=True, text=True, env=env,
                           check=True)
    assert "loaded: libcst nosync_fix.engine nosync_fix.rules.base" in first.stderr
    second = subprocess.run(command, cwd=tree, capture_output=True, text=True, env=env,
                            check=True)
    assert second.stdout == first.stdout and "Found" in second.stdout
    assert second.stderr.strip().endswith("loaded:")


# -- a cache must be safe on untrusted checkouts ----------------------------------------------

PAYLOAD = "import os\nos.system('echo pwned')\n"


def poisoned_database(tree: Path, attacker_home: Path, monkeypatch) -> Path:
    """The attacker's own run on the same file (the same public key), its entries then
    edited to carry a payload as the fixed text and no findings."""
    with monkeypatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(attacker_home))
        invoke("--diff", ".")
        folder = cache_folder(tree)
    db = sqlite3.connect(folder / "cache.sqlite")
    with db:
        for key, value in db.execute("SELECT key, value FROM entries").fetchall():
            entry = json.loads(value)
            entry.update(fixed=PAYLOAD, findings=[], applied=[], error=None)
            db.execute("UPDATE entries SET value = ? WHERE key = ?", (json.dumps(entry), key))
    db.close()
    return folder


@pytest.mark.parametrize("where", ["shipped", "cache-dir"])
def test_a_planted_cache_supplies_nothing(tree: Path, tmp_path: Path, monkeypatch,
                                          where: str) -> None:
    planted = poisoned_database(tree, tmp_path / "attacker", monkeypatch)
    shipped = tree / ".nosync_cache"  # as it arrives with the sources
    if planted != shipped:  # (where nosync-fix 0.1 kept its cache)
        shipped.mkdir()
        for name in os.listdir(planted):
            (shipped / name).write_bytes((planted / name).read_bytes())
    before = (shipped / "cache.sqlite").read_bytes()
    args = ["--cache-dir", ".nosync_cache"] if where == "cache-dir" else []
    result = invoke(*args, "--diff", ".")
    assert "pwned" not in result.output
    assert "total += loss.detach()" in result.output  # computed here, not replayed
    result = invoke(*args, ".")
    assert result.exit_code == 2  # broken.py
    for name in ("train0.py", "clean.py", "unsafe.py"):
        assert "pwned" not in (tree / name).read_text()
    assert "total += loss.detach()" in (tree / "train0.py").read_text()
    check = invoke(*args, "--check", "unsafe.py")  # findings are not hidden either
    assert check.exit_code == 1 and "NSY201" in check.output
    if where == "shipped":  # the default cache is elsewhere: the shipped one is not even read
        assert (shipped / "cache.sqlite").read_bytes() == before


def test_a_copied_database_of_another_user_is_no_hit(tree: Path, tmp_path: Path,
                                                     monkeypatch) -> None:
    with monkeypatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path / "other-user"))
        invoke("--check", ".")
        theirs = cache_folder(tree)
    mine = cache_folder(tree)
    mine.mkdir(parents=True)
    (mine / "cache.sqlite").write_bytes((theirs / "cache.sqlite").read_bytes())
    calls = []
    real = engine.process_source
    monkeypatch.setattr(engine, "process_source",
                        lambda source, name, *a, **k: calls.append(name) or real(
                            source, name, *a, **k))
    invoke("--check", "-j", "1", ".")
    assert len(calls) == 6


def test_the_secret_is_private_and_made_once(tree: Path, user_cache: Path) -> None:
    invoke("--check", ".")
    secret = user_cache / "secret.key"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    first = secret.read_bytes()
    assert len(first) == 32
    invoke("--check", ".")
    assert secret.read_bytes() == first
    assert [p.name for p in user_cache.iterdir() if p.name.startswith(".secret")] == []


def test_a_secret_others_can_read_is_not_used(tree: Path, user_cache: Path,
                                              monkeypatch) -> None:
    invoke("--check", ".")
    os.chmod(user_cache / "secret.key", 0o644)
    result = CliRunner().invoke(main, ["--isolated", "--check", "."])
    assert "warning:" in result.output and "not private" in result.output
    forbid_analysis(monkeypatch)
    with pytest.raises(AssertionError, match="analysed again"):
        invoke("--check", ".")


def test_the_default_cache_is_outside_the_checked_tree(tree: Path, user_cache: Path) -> None:
    invoke("--check", ".")
    assert not (tree / ".nosync_cache").exists()
    assert cache_folder(tree).parent == user_cache
    assert (cache_folder(tree) / "cache.sqlite").is_file()


def foreign_database(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    with db:
        db.execute("CREATE TABLE entries (key TEXT PRIMARY KEY, tool TEXT, value TEXT)")
        db.execute("INSERT INTO entries VALUES ('k', 'another program', 'precious')")
    db.close()
    return path.read_bytes()


def test_another_programs_database_is_left_alone(tree: Path, tmp_path: Path) -> None:
    folder = tmp_path / "theirs"
    before = foreign_database(folder / "cache.sqlite")
    first = CliRunner().invoke(main, ["--isolated", "--cache-dir", str(folder), "--check", "."])
    assert first.exit_code == 2  # broken.py
    warnings = [line for line in first.output.splitlines() if "warning:" in line]
    assert len(warnings) == 1 and "not a nosync-fix cache" in warnings[0]
    assert (folder / "cache.sqlite").read_bytes() == before
    assert sorted(os.listdir(folder)) == sorted(["cache.sqlite", ".gitignore", "CACHEDIR.TAG"])


def test_a_symlinked_cache_folder_is_not_followed(tree: Path, tmp_path: Path) -> None:
    target = tmp_path / "victim"
    before = foreign_database(target / "cache.sqlite")
    link = tree / ".nosync_cache"
    os.symlink(target, link)
    result = CliRunner().invoke(main, ["--isolated", "--cache-dir", str(link), "--check", "."])
    assert "symbolic link" in result.output and result.exit_code == 2
    assert sorted(os.listdir(target)) == ["cache.sqlite"]
    assert (target / "cache.sqlite").read_bytes() == before


def test_a_symlinked_database_file_is_not_followed(tree: Path, tmp_path: Path) -> None:
    target = tmp_path / "victim.sqlite"
    before = foreign_database(target)
    folder = tmp_path / "cache"
    folder.mkdir()
    os.symlink(target, folder / "cache.sqlite")
    result = CliRunner().invoke(main, ["--isolated", "--cache-dir", str(folder), "--check", "."])
    assert "not a regular file" in result.output
    assert target.read_bytes() == before


def test_a_damaged_page_is_repaired_once(tree: Path, monkeypatch) -> None:
    for i in range(40):
        (tree / f"more{i}.py").write_text(TRAIN.replace("total", f"total{i}"))
    first = invoke("--check", ".")
    database = cache_folder(tree) / "cache.sqlite"
    data = bytearray(database.read_bytes())
    assert len(data) > 3 * 4096
    data[4096:] = b"\xa5" * (len(data) - 4096)  # every page past the header's: garbage
    database.write_bytes(bytes(data))
    second = invoke("--check", ".")
    assert (second.exit_code, second.output) == (first.exit_code, first.output)
    forbid_analysis(monkeypatch)
    third = invoke("--check", ".")  # repaired and refilled by the second run
    assert (third.exit_code, third.output) == (first.exit_code, first.output)


#: A finding without a fix (its total is printed every step).
REPORT_ONLY = textwrap.dedent("""\
    import torch


    def train(model, loader):
        total = 0.0
        for x in loader:
            loss = torch.nn.functional.mse_loss(model(x), x)
            total += loss.item()
            print(total)
    """)


@pytest.mark.parametrize("first, second, analysed", [
    ("text", "json", {"train0.py", "unsafe.py"}),  # only files whose fixes need edits
    ("json", "text", set()),
    ("sarif", "github", set()),
    ("text", "github", set()),
    ("json", "sarif", set()),
])
def test_another_output_format_reads_the_cache(project: Path, monkeypatch, first: str,
                                               second: str, analysed: set[str]) -> None:
    # The format only decides how findings are printed; JSON and SARIF also carry each
    # fix's edits, which a text run does not compute: a text run's entry serves a JSON
    # run for every file without a fix, and a JSON run's entry serves every format.
    (project / "train0.py").write_text(TRAIN)
    (project / "unsafe.py").write_text(UNSAFE)
    (project / "report_only.py").write_text(REPORT_ONLY)
    for i in range(3):
        (project / f"clean{i}.py").write_text(CLEAN)
    (project / "broken.py").write_text("def f(:\n")
    uncached = invoke("--check", "--no-cache", "--output-format", second, ".")
    invoke("--check", "--output-format", first, ".")
    seen: list[str] = []
    analyse = engine.process_source

    def counted(source, filename, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(os.path.basename(filename))
        return analyse(source, filename, *args, **kwargs)

    monkeypatch.setattr(engine, "process_source", counted)
    again = invoke("--check", "-j", "1", "--output-format", second, ".")
    assert set(seen) == analysed
    assert (again.exit_code, again.output) == (uncached.exit_code, uncached.output)
