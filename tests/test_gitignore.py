"""Discovery honours .gitignore files as git does, without ever running git."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from nosync_fix.cli import main
from nosync_fix.config import Settings
from nosync_fix.files import GitIgnore, walk

TRAIN = ("import torch\n\n\ndef train(model, loader):\n    total = 0.0\n"
         "    for x in loader:\n        total += model(x).item()\n    return total\n")


def write(root: Path, name: str, text: str = "x = 1\n") -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    """A user whose global git ignore file is ours to write, and no git configuration."""
    folder = tmp_path / "home"
    (folder / ".config" / "git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    return folder


def test_a_hostile_git_config_runs_nothing(project: Path, tmp_path: Path) -> None:
    """A tree that carries its own .git/config with core.fsmonitor (git runs that command
    on `git status`, `git check-ignore` ...) must be checked without running it."""
    marker = tmp_path / "pwned"
    write(project, "train.py", TRAIN)
    write(project, ".gitignore", "ignored/\n")
    write(project, "ignored/train.py", TRAIN)
    hook = write(project, "hook.sh", f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    (project / ".git" / "info").mkdir(parents=True)
    (project / ".git" / "objects").mkdir()
    (project / ".git" / "refs").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / ".git" / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
        f"\tfsmonitor = {hook}\n\tuntrackedCache = false\n")
    if shutil.which("git"):  # the probe is real: git itself does run it
        subprocess.run(["git", "-C", str(project), "status", "--porcelain"],
                       capture_output=True, timeout=60)
        if marker.exists():
            marker.unlink()
        else:
            pytest.skip("this git does not run core.fsmonitor commands")
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "--check", "."])
    assert result.exit_code == 1
    assert "train.py" in result.output and "ignored/" not in result.output
    assert not marker.exists()


LAYOUT = {
    ".gitignore": "*.gen.py\nbuild/\n/top_only.py\nlogs/*\n!logs/keep.py\ndeep/**/skip.py\n",
    "a.py": "", "a.gen.py": "", "top_only.py": "", "build/b.py": "",
    "sub/top_only.py": "", "sub/build/b.py": "", "sub/c.py": "",
    "sub/.gitignore": "!special.gen.py\nlocal.py\n/anchored.py\n",
    "sub/special.gen.py": "", "sub/other.gen.py": "", "sub/local.py": "",
    "sub/inner/local.py": "", "sub/anchored.py": "", "sub/inner/anchored.py": "",
    "sub/inner/.gitignore": "!local.py\n",
    "logs/keep.py": "", "logs/drop.py": "",
    "deep/x/y/skip.py": "", "deep/x/y/keep.py": "", "deep/skip.py": "",
    "excluded_by_info.py": "", "pkg/excluded_by_info.py": "",
    "global_ignored.py": "", "pkg/global_ignored.py": "",
    "reinclude/.gitignore": "*\n!*.py\n!*/\n", "reinclude/x.py": "", "reinclude/d/y.py": "",
    "gone/.gitignore": "", "gone/z.py": "",
    "dir_pattern/file/x.py": "", "dir_pattern/.gitignore": "file/\n",
    "neg_under_ignored/.gitignore": "ignored/\n!ignored/back.py\n",
    "neg_under_ignored/ignored/back.py": "",
    "spaces/.gitignore": "with\\ space.py\n# comment.py\n\\#hash.py\nbad\\\n",
    "spaces/with space.py": "", "spaces/#hash.py": "", "spaces/comment.py": "",
    "inside/.gitignore": "/sub/**\n!sub/keep.py\n", "inside/sub/drop.py": "",
    "inside/sub/keep.py": "", "inside/keep.py": "",
}


def make_layout(root: Path, home: Path) -> None:
    for name, text in LAYOUT.items():
        write(root, name, text)
    (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("excluded_by_info.py\ngone/\n")
    (home / ".config" / "git" / "ignore").write_text("global_ignored.py\n!pkg/global_ignored.py\n")


def walked(root: Path, start: Path | None = None) -> set[str]:
    found = walk(start or root, Settings(exclude=(".git",)))
    return {Path(f).resolve().relative_to(root.resolve()).as_posix() for f in found}


EXPECTED = {  # what git says (checked against git below)
    "a.py", "sub/top_only.py", "sub/c.py", "sub/special.gen.py", "sub/inner/local.py",
    "sub/inner/anchored.py", "logs/keep.py", "deep/x/y/keep.py", "pkg/global_ignored.py",
    "reinclude/x.py", "reinclude/d/y.py", "spaces/comment.py", "inside/keep.py",
    "inside/sub/keep.py",
}


def test_nested_ignore_files_follow_gits_rules(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "repo"
    make_layout(root, home)
    assert walked(root) == EXPECTED


def test_the_rules_agree_with_git_itself(tmp_path: Path, home: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    root.mkdir()
    # Our own tree, made here: running git in it is safe.
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    make_layout(root, home)
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z"],
        check=True, capture_output=True, text=True).stdout.split("\0")
    assert walked(root) == {f for f in listed if f.endswith(".py")}


def test_walking_a_subfolder_uses_the_ignore_files_above_it(tmp_path: Path,
                                                            home: Path) -> None:
    root = tmp_path / "repo"
    make_layout(root, home)
    assert walked(root, root / "sub") == {f for f in EXPECTED if f.startswith("sub/")}
    # A folder named on the command line is checked even if ignored (as ruff does) ...
    assert walked(root, root / "build") == {"build/b.py"}
    # ... but the patterns still apply to what is below it.
    assert walked(root, root / "logs") == {"logs/keep.py"}


def test_no_ignore_files_outside_a_work_tree(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "plain"
    write(root, ".gitignore", "*.py\n")
    write(root, "a.py")
    assert GitIgnore.for_path(root) is None
    assert walked(root) == {"a.py"}


def test_linked_work_tree_reads_the_common_exclude(tmp_path: Path, home: Path) -> None:
    main_git = tmp_path / "main" / ".git"
    (main_git / "info").mkdir(parents=True)
    (main_git / "info" / "exclude").write_text("secret_*.py\n")
    (main_git / "worktrees" / "wt").mkdir(parents=True)
    (main_git / "worktrees" / "wt" / "commondir").write_text("../..\n")
    root = tmp_path / "wt"
    write(root, ".git", f"gitdir: {main_git / 'worktrees' / 'wt'}\n")
    write(root, "secret_a.py")
    write(root, "a.py")
    assert walked(root) == {"a.py"}


def test_a_gitignore_that_is_a_link_or_a_fifo_is_not_read(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    elsewhere = write(tmp_path, "elsewhere", "*.py\n")
    write(root, "a/x.py")
    os.symlink(elsewhere, root / "a" / ".gitignore")
    write(root, "b/y.py")
    os.mkfifo(root / "b" / ".gitignore")  # reading it would block for ever
    assert walked(root) == {"a/x.py", "b/y.py"}
