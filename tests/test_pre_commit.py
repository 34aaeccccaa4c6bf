"""The README's pre-commit snippet, run as written by the real pre-commit in a throwaway
git repository (issue 19), and the hooks this repository publishes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import nosync_fix

pytest.importorskip("pre_commit")

ROOT = Path(__file__).parents[1]
SRC = str(Path(nosync_fix.__file__).parents[1])
README = (ROOT / "README.md").read_text(encoding="utf-8")

TRAIN = textwrap.dedent("""\
    import torch


    def train(model, loader):
        total = 0.0
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            total += loss.item()
        return total
    """)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _snippets() -> list[str]:
    """The README's YAML blocks that are a .pre-commit-config.yaml."""
    blocks = re.findall(r"```yaml\n(.*?)```", README, flags=re.DOTALL)
    return [b for b in blocks if b.startswith("# .pre-commit-config.yaml")]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def _pre_commit(cwd: Path, env: dict[str, str], *args: str,
                timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def throwaway(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A new git repository holding one file with a fixable finding, and an environment
    whose PATH has a ``nosync-fix`` that runs this checkout (as an install would)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "train.py").write_text(TRAIN, encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "nosync-fix"
    shim.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {SRC!r})\n"
                    "from nosync_fix.cli import main\nmain()\n", encoding="utf-8")
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "PRE_COMMIT_COLOR": "never",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    env.pop("PYTHONPATH", None)
    return repo, env


def test_hook_manifest_is_valid() -> None:
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest",
                           str(ROOT / ".pre-commit-hooks.yaml")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_readme_snippet_runs_as_written(throwaway: tuple[Path, dict[str, str]]) -> None:
    repo, env = throwaway
    (snippet,) = _snippets()
    (repo / ".pre-commit-config.yaml").write_text(snippet, encoding="utf-8")
    proc = _pre_commit(repo, env, "validate-config", ".pre-commit-config.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _git(repo, "add", ".")

    first = _pre_commit(repo, env, "run", "--all-files")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    fixed = (repo / "train.py").read_text(encoding="utf-8")
    assert ".item()" not in fixed and "loss.detach()" in fixed

    _git(repo, "add", ".")
    second = _pre_commit(repo, env, "run", "--all-files")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Passed" in second.stdout


def test_readme_pins_only_revisions_that_exist() -> None:
    # It once pinned `rev: v0.1.0`, a tag that was never made.
    revs = [r for snippet in _snippets() for r in re.findall(r"^\s*rev:\s*(\S+)", snippet,
                                                              flags=re.MULTILINE)]
    if not revs:
        return
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for rev in revs:
        found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                               cwd=ROOT, capture_output=True, text=True)
        assert found.returncode == 0, f"README pins rev {rev!r}, which this repository lacks"


@pytest.mark.slow
def test_remote_hook_pinned_by_autoupdate_installs_and_fixes(
        throwaway: tuple[Path, dict[str, str]]) -> None:
    """The form for a hook repository, with this checkout as it: `pre-commit autoupdate`
    replaces a rev that does not exist by the newest commit (no tag exists), and pre-commit
    installs nosync-fix from that commit into its own environment. Needs the package index
    (pre-commit pip-installs the hook's dependencies)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    repo, env = throwaway
    head = _git(ROOT, "rev-parse", "HEAD")
    (repo / ".pre-commit-config.yaml").write_text(textwrap.dedent(f"""\
        repos:
          - repo: {ROOT.as_posix()}
            rev: v0.1.0
            hooks:
              - id: nosync-fix
        """), encoding="utf-8")
    update = _pre_commit(repo, env, "autoupdate")
    assert update.returncode == 0, update.stdout + update.stderr
    assert f"rev: {head}" in (repo / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    _git(repo, "add", ".")
    run = _pre_commit(repo, env, "run", "--all-files", timeout=600)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "files were modified by this hook" in run.stdout
    assert ".item()" not in (repo / "train.py").read_text(encoding="utf-8")
