"""The command line, through click's CliRunner and as a real subprocess."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import nosync_fix
from nosync_fix.cli import main

#: The package under test, for subprocesses (not whichever one the interpreter finds).
SRC = str(Path(nosync_fix.__file__).parents[1])

TRAIN = textwrap.dedent("""\
    import torch
    import torch.nn.functional as F


    def train(model, loader, optimizer):
        total = 0.0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
        return total
    """)
FIXED = TRAIN.replace("total += loss.item()\n",
                      "total += loss.detach().double()\n    total = float(total)\n")
UNSAFE_ONLY = textwrap.dedent("""\
    import torch


    def train(model, loader):
        total = 0.0
        for batch in loader:
            total += model(batch).loss.item()
        return total
    """)
REPORT_ONLY = textwrap.dedent("""\
    import torch


    def train(model, loader):
        total = 0.0
        for x in loader:
            loss = torch.nn.functional.mse_loss(model(x), x)
            total += loss.item()
            print(total)
    """)
CLEAN = "import torch\n\nx = torch.ones(3)\n"


def invoke(*args: str, input: str | bytes | None = None):
    runner = CliRunner()
    return runner.invoke(main, ["--isolated", *args], input=input, catch_exceptions=False)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- modes and exit codes ----------------------------------------------------------------------


def test_fix_in_place_then_nothing_left(project: Path) -> None:
    path = write(project, "train.py", TRAIN)
    result = invoke("train.py")
    assert result.exit_code == 0, result.output
    assert path.read_text() == FIXED
    assert "Found 1 finding (1 fixed)." in result.output


def test_fix_is_idempotent(project: Path) -> None:
    path = write(project, "train.py", TRAIN)
    invoke("train.py")
    mtime = path.stat().st_mtime_ns
    result = invoke("train.py")
    assert result.exit_code == 0
    assert path.read_text() == FIXED
    assert path.stat().st_mtime_ns == mtime, "an unchanged file must not be rewritten"
    assert "All checks passed!" in result.output


def test_remaining_findings_exit_1_with_summary(project: Path) -> None:
    write(project, "a.py", UNSAFE_ONLY)
    write(project, "b.py", REPORT_ONLY)
    result = invoke(".")
    assert result.exit_code == 1
    assert "a.py:7:9: NSY201 " in result.output
    assert "[*]" not in result.output
    assert "Found 2 findings (0 fixed, 1 fixable with --unsafe-fixes, 1 without a fix)." in (
        result.output)


def test_unsafe_fixes_option_applies_unsafe_fixes(project: Path) -> None:
    path = write(project, "a.py", UNSAFE_ONLY)
    result = invoke("--unsafe-fixes", "a.py")
    assert result.exit_code == 0, result.output
    assert "detach()" in path.read_text()


def test_diff_writes_nothing_and_exits_1(project: Path) -> None:
    path = write(project, "train.py", TRAIN)
    result = invoke("--diff", "train.py")
    assert result.exit_code == 1
    assert path.read_text() == TRAIN
    assert "--- train.py\n+++ train.py\n" in result.output
    assert ("-        total += loss.item()\n"
            "+        total += loss.detach().double()\n") in result.output


def test_diff_of_clean_file_exits_0(project: Path) -> None:
    write(project, "clean.py", CLEAN)
    result = invoke("--diff", "clean.py")
    assert result.exit_code == 0
    assert "---" not in result.output


def test_check_lists_and_exits_1_without_writing(project: Path) -> None:
    path = write(project, "train.py", TRAIN)
    result = invoke("--check", "train.py")
    assert result.exit_code == 1
    assert path.read_text() == TRAIN
    assert "train.py:11:9: NSY201 [*] `total += loss.item()`" in result.output
    assert "[*] 1 fixable with `nosync-fix`." in result.output


def test_exit_zero_covers_check_and_diff(project: Path) -> None:
    write(project, "train.py", TRAIN)
    assert invoke("--check", "--exit-zero", "train.py").exit_code == 0
    assert invoke("--diff", "--exit-zero", "train.py").exit_code == 0


# -- selection and configuration ---------------------------------------------------------------


def test_select_and_ignore_with_prefixes(project: Path) -> None:
    write(project, "train.py", TRAIN)
    assert invoke("--check", "--select", "NSY2", "train.py").exit_code == 1
    assert invoke("--check", "--ignore", "NSY2", "train.py").exit_code == 0
    assert invoke("--check", "--select", "ALL", "--ignore", "NSY201", "train.py").exit_code == 0
    # The more specific selector wins; on a tie, ignore wins.
    assert invoke("--check", "--select", "NSY2", "--ignore", "NSY", "train.py").exit_code == 1
    assert invoke("--check", "--select", "NSY201", "--ignore", "NSY201",
                  "train.py").exit_code == 0
    assert invoke("--check", "--ignore", "NSY2", "--extend-select", "NSY201",
                  "train.py").exit_code == 1


def test_unknown_rule_code_is_a_usage_error(project: Path) -> None:
    write(project, "train.py", TRAIN)
    result = invoke("--select", "NSY999", "train.py")
    assert result.exit_code == 2
    assert "unknown rule code or prefix 'NSY999'" in result.output
    assert "Traceback" not in result.output


def test_pyproject_configuration_is_read(project: Path) -> None:
    write(project, "pyproject.toml", '[tool.nosync-fix]\nignore = ["NSY201"]\n')
    write(project, "train.py", TRAIN)
    runner = CliRunner()
    assert runner.invoke(main, ["--check", "train.py"]).exit_code == 0
    assert runner.invoke(main, ["--check", "--isolated", "train.py"]).exit_code == 1


def test_config_option_and_per_file_ignores(project: Path) -> None:
    write(project, "cfg.toml", '[tool.nosync-fix.per-file-ignores]\n"scripts/*" = ["NSY2"]\n')
    write(project, "scripts/train.py", TRAIN)
    write(project, "src/train.py", TRAIN)
    runner = CliRunner()
    result = runner.invoke(main, ["--check", "--config", "cfg.toml", "."])
    assert result.exit_code == 1
    assert "src/train.py" in result.output and "scripts/train.py" not in result.output


@pytest.mark.parametrize("config, message", [
    ("[tool.nosync-fix]\nselekt = ['NSY2']\n", "unknown key 'selekt'"),
    ("[tool.nosync-fix]\nselect = ['NSY777']\n", "unknown rule code or prefix 'NSY777'"),
    ("[tool.nosync-fix\nselect = 1\n", "invalid TOML"),
    ("[tool.nosync-fix]\nselect = 'NSY2'\n", "select must be a list of strings"),
])
def test_broken_configuration_is_one_line_exit_2(project: Path, config: str,
                                                 message: str) -> None:
    write(project, "pyproject.toml", config)
    write(project, "train.py", TRAIN)
    result = CliRunner().invoke(main, ["train.py"])
    assert result.exit_code == 2
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert (project / "train.py").read_text() == TRAIN


def test_hot_functions_setting(project: Path) -> None:
    source = "import torch\n\ndef run_batch(model, x):\n    if model(x).sum().item() > 0:\n" \
             "        pass\n"
    write(project, "pyproject.toml", '[tool.nosync-fix]\nhot-functions = ["run_batch"]\n')
    write(project, "a.py", source)
    # No rule in this build reports that `if`; the setting itself must be accepted.
    assert CliRunner().invoke(main, ["--check", "a.py"]).exit_code in (0, 1)


# -- files -------------------------------------------------------------------------------------


def test_directories_skip_default_excludes_and_gitignore(project: Path) -> None:
    write(project, "src/train.py", TRAIN)
    write(project, "build/train.py", TRAIN)
    write(project, ".venv/lib/train.py", TRAIN)
    write(project, "generated/train.py", TRAIN)
    write(project, ".gitignore", "generated/\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    result = invoke("--check", ".")
    assert "src/train.py" in result.output
    for skipped in ("build/", ".venv/", "generated/"):
        assert skipped not in result.output


def test_explicit_file_is_always_processed(project: Path) -> None:
    write(project, "build/train.py", TRAIN)
    result = invoke("--check", "build/train.py")
    assert result.exit_code == 1
    assert "build/train.py:11:9" in result.output


def test_exclude_options(project: Path) -> None:
    write(project, "a/train.py", TRAIN)
    write(project, "b/train.py", TRAIN)
    result = invoke("--check", "--extend-exclude", "b", ".")
    assert "a/train.py" in result.output and "b/train.py" not in result.output


def test_symlink_loops_do_no_harm(project: Path) -> None:
    write(project, "pkg/train.py", TRAIN)
    os.symlink(project / "pkg", project / "pkg" / "loop")
    os.symlink(project / "pkg" / "self.py", project / "pkg" / "self.py")
    result = invoke("--check", ".")
    assert result.exit_code == 1
    assert result.output.count("NSY201") == 1


def test_missing_path_is_an_error_but_others_are_processed(project: Path) -> None:
    path = write(project, "train.py", TRAIN)
    result = invoke("nope.py", "train.py")
    assert result.exit_code == 2
    assert "error: nope.py: no such file or folder" in result.output
    assert path.read_text() == FIXED


def test_parse_error_beside_good_files(project: Path) -> None:
    write(project, "broken.py", "def f(:\n    pass\n")
    good = write(project, "train.py", TRAIN)
    result = invoke(".")
    assert result.exit_code == 2
    assert "error: broken.py: cannot parse" in result.output
    assert good.read_text() == FIXED
    assert (project / "broken.py").read_text() == "def f(:\n    pass\n"


def test_non_python_file_named_explicitly(project: Path) -> None:
    write(project, "notes.txt", "hello")
    result = invoke("notes.txt")
    assert result.exit_code == 2
    assert "not a Python source file" in result.output


def test_read_only_file_is_not_written(project: Path) -> None:
    path = write(project, "train.py", TRAIN)
    path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    try:
        result = invoke("train.py")
        assert result.exit_code == 2
        assert "read-only" in result.output
        assert path.read_text() == TRAIN
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_file_mode_crlf_and_bom_are_kept(project: Path) -> None:
    path = project / "train.py"
    path.write_bytes(b"\xef\xbb\xbf" + TRAIN.replace("\n", "\r\n").encode())
    path.chmod(0o751)
    assert invoke("train.py").exit_code == 0
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.decode("utf-8-sig") == FIXED.replace("\n", "\r\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o751


# -- suppression -------------------------------------------------------------------------------


def test_noqa_on_the_line_and_for_the_file(project: Path) -> None:
    write(project, "a.py", TRAIN.replace("total += loss.item()", "total += loss.item()  # noqa"))
    write(project, "b.py", "# nosync-fix: noqa: NSY2\n" + TRAIN)
    write(project, "c.py", TRAIN.replace("total += loss.item()",
                                         "total += loss.item()  # noqa: NSY3"))
    result = invoke("--check", ".")
    assert "a.py" not in result.output and "b.py" not in result.output
    assert "c.py:11:9: NSY201" in result.output


# -- stdin -------------------------------------------------------------------------------------


def test_stdin_to_stdout(project: Path) -> None:
    result = invoke("-", input=TRAIN)
    assert result.exit_code == 0
    assert result.stdout == FIXED


def test_stdin_check_uses_stdin_filename(project: Path) -> None:
    result = invoke("--check", "--stdin-filename", "model/train.py", "-", input=TRAIN)
    assert result.exit_code == 1
    assert "model/train.py:11:9: NSY201" in result.output


def test_stdin_parse_error_echoes_the_input(project: Path) -> None:
    result = invoke("-", input="def f(:\n")
    assert result.exit_code == 2
    assert result.stdout == "def f(:\n"


# -- output formats ----------------------------------------------------------------------------


def test_json_uses_ruff_field_names(project: Path) -> None:
    write(project, "train.py", TRAIN)
    result = invoke("--check", "--output-format", "json", "train.py")
    items = json.loads(result.stdout)
    assert len(items) == 1
    item = items[0]
    assert set(item) >= {"code", "message", "filename", "location", "end_location", "fix",
                         "url", "noqa_row"}
    assert item["code"] == "NSY201"
    assert item["location"] == {"row": 11, "column": 9}
    assert item["filename"] == str(project / "train.py")
    assert item["fix"]["applicability"] == "safe"
    edits = item["fix"]["edits"]
    assert edits and all({"content", "location", "end_location"} <= set(e) for e in edits)
    # Applying the edits reproduces the fixer's output.
    lines = TRAIN.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: e["location"]["row"], reverse=True):
        start, end = edit["location"]["row"] - 1, edit["end_location"]["row"] - 1
        lines[start:end] = [edit["content"]]
    assert "".join(lines) == FIXED


def test_github_annotations(project: Path) -> None:
    write(project, "train.py", TRAIN)
    result = invoke("--check", "--output-format", "github", "train.py")
    assert result.stdout.startswith(
        "::warning title=nosync-fix NSY201,file=train.py,line=11,col=9,endLine=11,endColumn=29::"
        "NSY201 ")


def test_sarif_is_sarif_2_1_0(project: Path) -> None:
    write(project, "train.py", TRAIN)
    result = invoke("--check", "--output-format", "sarif", "train.py")
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    assert run["tool"]["driver"]["name"] == "nosync-fix"
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    (finding,) = run["results"]
    assert finding["ruleId"] == "NSY201"
    assert rule_ids[finding["ruleIndex"]] == "NSY201"
    region = finding["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 11, "startColumn": 9, "endLine": 11, "endColumn": 29}


def test_statistics_and_show_fixes(project: Path) -> None:
    write(project, "a.py", TRAIN)
    write(project, "b.py", REPORT_ONLY)
    stats = invoke("--check", "--statistics", ".")
    assert "    2\tNSY201\t[*] accumulate-on-device" in stats.output
    fixed = invoke("--show-fixes", ".")
    assert "Fixed 1 finding:" in fixed.output
    assert "1 × NSY201 (accumulate-on-device)" in fixed.output


def test_list_rules_and_explain() -> None:
    listing = invoke("--list-rules")
    assert listing.exit_code == 0 and "NSY201" in listing.output
    page = invoke("--explain", "nsy201")
    assert page.exit_code == 0 and "## Fix safety" in page.output
    assert invoke("--explain", "NSY999").exit_code == 2


def test_quiet_prints_no_summary(project: Path) -> None:
    write(project, "b.py", REPORT_ONLY)
    result = invoke("-q", "--check", ".")
    assert "Found" not in result.output and "NSY201" in result.output


def test_no_color_when_not_a_terminal(project: Path) -> None:
    write(project, "b.py", REPORT_ONLY)
    assert "\x1b[" not in invoke("--check", ".").output


# -- as a real program -------------------------------------------------------------------------


def test_real_subprocess_parallel_run(project: Path) -> None:
    for i in range(6):
        write(project, f"pkg/train{i}.py", TRAIN)
    write(project, "pkg/broken.py", "def f(:\n")
    proc = subprocess.run(
        [sys.executable, "-m", "nosync_fix", "--isolated", "-j", "2", "pkg"],
        capture_output=True, text=True, cwd=project,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": SRC})
    assert proc.returncode == 2
    assert "error: pkg/broken.py: cannot parse" in proc.stderr
    assert "Found 6 findings (6 fixed)." in proc.stdout
    for i in range(6):
        assert (project / f"pkg/train{i}.py").read_text() == FIXED
