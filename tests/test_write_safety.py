"""Writing fixed files back: never through a link out of the checked paths; mode, owner,
group and hard links kept."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

import nosync_fix.files as files
from nosync_fix.cli import main

TRAIN = """\
import torch


def train(model, loader, optimizer):
    total = 0.0
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        total += loss.item()
    return total
"""
FIXED_LINE = "total += loss.detach()"


def invoke(*args: str):
    return CliRunner().invoke(main, ["--isolated", "--no-cache", *args],
                              catch_exceptions=False)


@pytest.fixture
def outside(project: Path) -> Path:
    """``t/`` to be checked, and a file beside it that is not."""
    (project / "t").mkdir()
    path = project / "elsewhere.py"
    path.write_text(TRAIN)
    return path


@pytest.mark.parametrize("named", ["t", "t/link.py"])
def test_a_link_out_of_the_checked_paths_is_not_written(project: Path, outside: Path,
                                                        named: str) -> None:
    os.symlink("../elsewhere.py", project / "t" / "link.py")
    (project / "t" / "own.py").write_text(TRAIN)
    result = invoke(named)
    assert outside.read_text() == TRAIN
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if "error:" in line]
    assert len(errors) == 1
    assert "t/link.py: is a symbolic link to" in errors[0] and "not written" in errors[0]
    assert "t/link.py:9:9: NSY201" in result.output  # its finding is still reported
    assert "All checks passed" not in result.output
    if named == "t":
        assert FIXED_LINE in (project / "t" / "own.py").read_text()


def test_a_link_inside_the_checked_paths_is_written_through(project: Path) -> None:
    (project / "t" / "real").mkdir(parents=True)
    target = project / "t" / "real" / "train.py"
    target.write_text(TRAIN)
    os.symlink("real/train.py", project / "t" / "link.py")
    result = invoke("t")
    assert result.exit_code == 0, result.output
    assert (project / "t" / "link.py").is_symlink()
    assert FIXED_LINE in target.read_text()


def test_check_and_diff_of_a_link_out_are_no_error(project: Path, outside: Path) -> None:
    os.symlink("../elsewhere.py", project / "t" / "link.py")
    assert invoke("--check", "t").exit_code == 1
    assert invoke("--diff", "t").exit_code == 1
    assert outside.read_text() == TRAIN


def test_mode_is_kept(project: Path) -> None:
    path = project / "train.py"
    path.write_text(TRAIN)
    os.chmod(path, 0o640)
    invoke("train.py")
    assert path.read_text() != TRAIN
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="only root can give a file to another user")
def test_owner_and_group_are_kept(project: Path) -> None:
    path = project / "train.py"
    path.write_text(TRAIN)
    os.chown(path, 4242, 4343)
    os.chmod(path, 0o664)
    invoke("train.py")
    info = path.stat()
    assert path.read_text() != TRAIN
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4242, 4343, 0o664)


def test_a_file_whose_owner_cannot_be_kept_is_written_in_place(project: Path,
                                                               monkeypatch) -> None:
    """Not root, and the file belongs to someone else (group-writable): a new file would
    be ours, so the file itself is rewritten."""
    path = project / "train.py"
    path.write_text(TRAIN)
    inode = path.stat().st_ino
    real_fstat = os.fstat

    def foreign_owner(fd):  # type: ignore[no-untyped-def]
        info = real_fstat(fd)
        if os.path.samestat(info, os.stat(path)):
            return os.stat_result((info.st_mode, info.st_ino, info.st_dev, info.st_nlink,
                                   4242, 4343, info.st_size, info.st_atime, info.st_mtime,
                                   info.st_ctime))
        return info

    def refuse(*args):  # type: ignore[no-untyped-def]
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(files.os, "fstat", foreign_owner)
    monkeypatch.setattr(files.os, "chown", refuse)
    result = invoke("-j", "1", "train.py")
    assert result.exit_code == 0, result.output
    assert path.stat().st_ino == inode
    assert FIXED_LINE in path.read_text()
    assert not [p for p in project.iterdir() if p.name.endswith(".nosync-tmp")]


def test_hard_links_are_kept(project: Path) -> None:
    path = project / "train.py"
    path.write_text(TRAIN)
    os.link(path, project / "same.py")
    result = invoke(".")
    assert result.exit_code == 0, result.output
    assert path.stat().st_nlink == 2
    assert os.path.samefile(path, project / "same.py")
    assert (project / "same.py").read_text() == path.read_text() != TRAIN


def test_a_failed_in_place_write_restores_the_file(project: Path, monkeypatch) -> None:
    path = project / "train.py"
    path.write_text(TRAIN)
    real_fsync = os.fsync

    def full_disk(fd):  # type: ignore[no-untyped-def]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full_disk)
    with pytest.raises(files.FileProblem, match="No space left"):
        files._write_in_place(str(path), b"x = 1\n" * 100, TRAIN.encode())
    monkeypatch.setattr(files.os, "fsync", real_fsync)
    assert path.read_text() == TRAIN


def _unnamed_files_work_in(folder: Path) -> bool:
    if not hasattr(os, "O_TMPFILE"):
        return False
    try:
        os.close(os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o600))
    except OSError:
        return False
    return True


def folder_while_writing(project: Path, monkeypatch) -> list[str]:
    """What ``project`` holds at the moment the fixed bytes are flushed to disk."""
    seen: list[str] = []
    real_fsync = os.fsync

    def look(descriptor: int) -> None:
        seen.extend(sorted(p.name for p in project.iterdir()))
        real_fsync(descriptor)

    monkeypatch.setattr(files.os, "fsync", look)
    result = invoke("-j", "1", "train.py")
    assert result.exit_code == 0, result.output
    return seen


def test_the_file_being_written_has_no_name_until_it_is_whole(project: Path,
                                                               monkeypatch) -> None:
    """A run killed while it writes (SIGKILL, which no handler sees) leaves no temporary
    file in the user's tree: on Linux the new file is linked in only once its bytes are
    on disk, just before it replaces the original."""
    if not _unnamed_files_work_in(project):
        pytest.skip("no O_TMPFILE here")
    path = project / "train.py"
    path.write_text(TRAIN)
    path.chmod(0o751)
    assert folder_while_writing(project, monkeypatch) == ["train.py"]
    assert FIXED_LINE in path.read_text()
    assert sorted(p.name for p in project.iterdir()) == ["train.py"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o751


def test_without_unnamed_files_a_named_temporary_is_used_and_removed(project: Path,
                                                                     monkeypatch) -> None:
    monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    path = project / "train.py"
    path.write_text(TRAIN)
    path.chmod(0o640)
    seen = folder_while_writing(project, monkeypatch)
    assert len(seen) == 2 and seen[0].startswith(".train.py.") and seen[0].endswith(
        files.TEMPORARY_SUFFIX) and seen[1] == "train.py", seen
    assert FIXED_LINE in path.read_text()
    assert sorted(p.name for p in project.iterdir()) == ["train.py"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o640

