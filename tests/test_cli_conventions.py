"""ruff's command-line conventions (issue 19): --force-exclude, --fix/--no-fix,
--show-fixes with --diff and --check, --statistics as JSON, negated and extended
per-file-ignores, a fix_paths that reads pyproject.toml, and input that does not compile."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from nosync_fix.cli import main

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
FIXED = TRAIN.replace("total += loss.item()\n",
                      "total += loss.detach().double()\n    total = float(total)\n")


def invoke(*args: str, input: str | None = None):
    """The command as pre-commit and users run it: the project's pyproject.toml is read."""
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- --force-exclude ---------------------------------------------------------------------------


def test_explicit_excluded_file_is_processed_without_force_exclude(project: Path) -> None:
    write(project, "pyproject.toml", '[tool.nosync-fix]\nextend-exclude = ["vendored"]\n')
    write(project, "vendored/train.py", TRAIN)
    result = invoke("--check", "vendored/train.py")
    assert result.exit_code == 1
    assert "vendored/train.py:11:9: NSY201" in result.output


@pytest.mark.parametrize("config, args, named", [
    ('[tool.nosync-fix]\nextend-exclude = ["vendored"]\n', ["--force-exclude"],
     ["vendored/train.py", "pkg/vendored/train.py"]),
    ('[tool.nosync-fix]\nextend-exclude = ["vendored"]\nforce-exclude = true\n', [],
     ["vendored/train.py"]),
    ('[tool.nosync-fix]\nextend-exclude = ["gen_*.py"]\n', ["--force-exclude"],
     ["gen_model.py"]),
    ('[tool.nosync-fix]\nextend-exclude = ["pkg/vendored"]\n', ["--force-exclude"],
     ["pkg/vendored/train.py"]),
    ('[tool.nosync-fix]\nexclude = ["vendored"]\n', ["--force-exclude"],
     ["vendored/train.py"]),
    ("", ["--force-exclude", "--extend-exclude", "vendored"], ["vendored/train.py"]),
])
def test_force_exclude_applies_excludes_to_named_files(project: Path, config: str,
                                                       args: list[str],
                                                       named: list[str]) -> None:
    """pre-commit names every staged file: --force-exclude makes exclude and
    extend-exclude apply to them, by their name or any folder above them in the project."""
    write(project, "pyproject.toml", config)
    for name in named:
        write(project, name, TRAIN)
    kept = write(project, "src/train.py", TRAIN)
    result = invoke(*args, *named, "src/train.py")
    assert result.exit_code == 0, result.output
    assert kept.read_text() == FIXED
    for name in named:
        assert (project / name).read_text() == TRAIN
        assert name not in result.output


def test_force_exclude_leaves_default_excludes_above_the_project_alone(tmp_path: Path,
                                                                       monkeypatch) -> None:
    """A project that itself lives in a folder named like a default exclude (`build`)
    is not excluded: only the folders inside the project are tested."""
    project = tmp_path / "build" / "proj"
    write(project, "pyproject.toml", "[tool.nosync-fix]\n")
    path = write(project, "train.py", TRAIN)
    monkeypatch.chdir(project)
    result = invoke("--force-exclude", "train.py")
    assert result.exit_code == 0, result.output
    assert path.read_text() == FIXED


def test_no_force_exclude_wins_when_later(project: Path) -> None:
    write(project, "pyproject.toml",
          '[tool.nosync-fix]\nextend-exclude = ["vendored"]\nforce-exclude = true\n')
    write(project, "vendored/train.py", TRAIN)
    result = invoke("--no-force-exclude", "--check", "vendored/train.py")
    assert result.exit_code == 1
    assert "NSY201" in result.output


def test_force_exclude_with_stdin_filename_echoes_the_input(project: Path) -> None:
    write(project, "pyproject.toml", '[tool.nosync-fix]\nextend-exclude = ["vendored"]\n')
    result = invoke("--force-exclude", "--stdin-filename", "vendored/train.py", "-",
                    input=TRAIN)
    assert result.exit_code == 0
    assert result.stdout == TRAIN
    check = invoke("--force-exclude", "--check", "--stdin-filename", "vendored/train.py", "-",
                   input=TRAIN)
    assert check.exit_code == 0 and "NSY201" not in check.output


def test_pre_commit_hooks_force_exclude() -> None:
    hooks = (Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text()
    entries = [line.split(":", 1)[1].strip() for line in hooks.splitlines()
               if line.strip().startswith("entry:")]
    assert entries and all("--force-exclude" in entry for entry in entries)


# -- --fix / --no-fix --------------------------------------------------------------------------


@pytest.mark.parametrize("config, args, fixed", [
    ("", [], True),  # fixing in place is the default, as with black and `ruff --fix`
    ("", ["--fix"], True),
    ("", ["--no-fix"], False),
    ("", ["--fix", "--no-fix"], False),  # the later flag wins
    ("", ["--no-fix", "--fix"], True),
    ("[tool.nosync-fix]\nfix = false\n", [], False),
    ("[tool.nosync-fix]\nfix = false\n", ["--fix"], True),
    ("[tool.nosync-fix]\nfix = true\n", ["--no-fix"], False),
])
def test_fix_and_no_fix(project: Path, config: str, args: list[str], fixed: bool) -> None:
    write(project, "pyproject.toml", config)
    path = write(project, "train.py", TRAIN)
    result = invoke(*args, "train.py")
    assert path.read_text() == (FIXED if fixed else TRAIN)
    if fixed:
        assert result.exit_code == 0, result.output
    else:  # reported only, as --check does
        assert result.exit_code == 1, result.output
        assert "train.py:11:9: NSY201 [*]" in result.output
        assert "1 fixable with `nosync-fix`" in result.output


def test_fix_does_not_make_diff_or_check_write(project: Path) -> None:
    path = write(project, "train.py", TRAIN)
    assert invoke("--fix", "--diff", "train.py").exit_code == 1
    assert invoke("--fix", "--check", "train.py").exit_code == 1
    assert path.read_text() == TRAIN


def test_no_fix_on_stdin_reports(project: Path) -> None:
    result = invoke("--no-fix", "-", input=TRAIN)
    assert result.exit_code == 1
    assert "-:11:9: NSY201" in result.output


def test_fix_setting_must_be_a_boolean(project: Path) -> None:
    write(project, "pyproject.toml", '[tool.nosync-fix]\nfix = "no"\n')
    write(project, "train.py", TRAIN)
    result = invoke("train.py")
    assert result.exit_code == 2
    assert "fix must be true or false" in result.output


# -- --show-fixes with --diff and --check; --statistics as JSON --------------------------------


def test_show_fixes_with_diff_lists_what_would_be_fixed(project: Path) -> None:
    write(project, "a.py", TRAIN)
    write(project, "b.py", UNSAFE_ONLY)
    result = invoke("--diff", "--show-fixes", ".")
    assert result.exit_code == 1
    assert result.stdout.startswith("--- a.py\n+++ a.py\n")  # stdout: the diff alone
    assert "Would fix 1 finding:\n- a.py:\n    1 × NSY201 (accumulate-on-device)\n" \
        in result.stderr
    assert "b.py" not in result.stderr.split("Would fix 1 finding in")[0]
    plain = invoke("--diff", ".")
    assert "Would fix 1 finding:" not in plain.output


def test_show_fixes_with_check_lists_the_applicable_fixes(project: Path) -> None:
    write(project, "a.py", TRAIN)
    write(project, "b.py", UNSAFE_ONLY)
    write(project, "c.py", REPORT_ONLY)
    result = invoke("--check", "--show-fixes", ".")
    assert result.exit_code == 1
    assert "Would fix 1 finding:\n- a.py:\n    1 × NSY201 (accumulate-on-device)\n" \
        in result.stdout
    unsafe = invoke("--check", "--show-fixes", "--unsafe-fixes", ".")
    assert "Would fix 2 findings:\n- a.py:\n    1 × NSY201 (accumulate-on-device)\n" \
        "- b.py:\n    1 × NSY201 (accumulate-on-device)\n" in unsafe.stdout
    assert "Would fix" not in invoke("--check", ".").output
    no_fix = invoke("--no-fix", "--show-fixes", ".")
    assert "Would fix 1 finding:" in no_fix.stdout


@pytest.mark.parametrize("mode", [["--check"], []])
def test_statistics_as_json_with_ruff_fields(project: Path, mode: list[str]) -> None:
    write(project, "a.py", TRAIN)
    write(project, "b.py", UNSAFE_ONLY)
    write(project, "c.py", REPORT_ONLY)
    result = invoke(*mode, "--statistics", "--output-format", "json", ".")
    assert result.exit_code == 1
    rows = json.loads(result.stdout)
    fixed_one = not mode  # fixing in place leaves the two findings without a safe fix
    assert rows == [{"code": "NSY201", "name": "accumulate-on-device",
                     "count": 2 if fixed_one else 3, "fixable": not fixed_one,
                     "fixable_count": 0 if fixed_one else 1}]


@pytest.mark.parametrize("output_format", ["github", "sarif"])
def test_statistics_with_other_formats_is_a_usage_error(project: Path,
                                                        output_format: str) -> None:
    write(project, "a.py", TRAIN)
    result = invoke("--check", "--statistics", "--output-format", output_format, ".")
    assert result.exit_code == 2
    assert "--statistics" in result.output and output_format in result.output


# -- per-file-ignores: negation and extend-per-file-ignores ------------------------------------


def _three_trees(project: Path) -> None:
    for folder in ("src", "scripts", "tools"):
        write(project, f"{folder}/train.py", TRAIN)


def test_negated_per_file_ignores_apply_to_files_not_matching(project: Path) -> None:
    write(project, "pyproject.toml",
          '[tool.nosync-fix.per-file-ignores]\n"!src/*" = ["NSY201"]\n')
    _three_trees(project)
    result = invoke("--check", ".")
    assert result.exit_code == 1
    assert "src/train.py:11:9: NSY201" in result.output
    assert "scripts/train.py" not in result.output and "tools/train.py" not in result.output


def test_negated_name_pattern(project: Path) -> None:
    write(project, "pyproject.toml",
          '[tool.nosync-fix.per-file-ignores]\n"!train.py" = ["NSY2"]\n')
    write(project, "train.py", TRAIN)
    write(project, "other.py", TRAIN)
    result = invoke("--check", ".")
    assert "train.py:11:9: NSY201" in result.output and "other.py" not in result.output


def test_extend_per_file_ignores_is_merged(project: Path) -> None:
    write(project, "pyproject.toml",
          '[tool.nosync-fix.per-file-ignores]\n"scripts/*" = ["NSY201"]\n'
          '[tool.nosync-fix.extend-per-file-ignores]\n"tools/*" = ["NSY2"]\n')
    _three_trees(project)
    result = invoke("--check", ".")
    assert result.exit_code == 1
    assert "src/train.py:11:9: NSY201" in result.output
    assert "scripts/train.py" not in result.output and "tools/train.py" not in result.output


@pytest.mark.parametrize("config, message", [
    ('[tool.nosync-fix.extend-per-file-ignores]\n"a/*" = "NSY2"\n',
     "extend-per-file-ignores.'a/*' must be a list of codes"),
    ('[tool.nosync-fix]\nextend-per-file-ignores = ["a/*"]\n',
     "extend-per-file-ignores must be a table"),
    ('[tool.nosync-fix.per-file-ignores]\n"!" = ["NSY2"]\n', "empty pattern"),
    ('[tool.nosync-fix.extend-per-file-ignores]\n"a/*" = ["NSY777"]\n',
     "unknown rule code or prefix 'NSY777' in per-file-ignores"),
])
def test_bad_per_file_ignores_are_one_line_errors(project: Path, config: str,
                                                  message: str) -> None:
    write(project, "pyproject.toml", config)
    write(project, "train.py", TRAIN)
    result = invoke("--check", "train.py")
    assert result.exit_code == 2
    assert message in result.output


# -- fix_paths reads pyproject.toml as the command line does -----------------------------------


def _library_project(tmp_path: Path, config: str) -> tuple[Path, Path]:
    """A project folder with a pyproject.toml, and the working folder elsewhere."""
    project = tmp_path / "proj"
    write(project, "pyproject.toml", config)
    return project, write(project, "pkg/train.py", TRAIN)


def test_fix_paths_reads_the_projects_pyproject(tmp_path: Path, monkeypatch) -> None:
    from nosync_fix import fix_paths

    project, path = _library_project(tmp_path, '[tool.nosync-fix]\nignore = ["NSY201"]\n')
    monkeypatch.chdir(tmp_path)  # found from the paths, not from the working folder
    (outcome,) = fix_paths([str(project / "pkg")])
    assert not outcome.changed and not outcome.written
    assert outcome.result is not None and outcome.result.findings == ()
    assert path.read_text() == TRAIN


def test_fix_paths_per_file_ignores_are_relative_to_the_project(tmp_path: Path,
                                                                monkeypatch) -> None:
    from nosync_fix import fix_paths

    project, path = _library_project(
        tmp_path, '[tool.nosync-fix.per-file-ignores]\n"pkg/*" = ["NSY2"]\n')
    other = write(project, "src/train.py", TRAIN)
    monkeypatch.chdir(tmp_path)
    outcomes = {Path(o.filename).parent.name: o for o in fix_paths([str(project)])}
    assert not outcomes["pkg"].written and outcomes["src"].written
    assert path.read_text() == TRAIN and other.read_text() == FIXED


def test_fix_paths_configured_unsafe_fixes_and_explicit_arguments(tmp_path: Path) -> None:
    from nosync_fix import fix_paths

    project = tmp_path / "proj"
    write(project, "pyproject.toml", "[tool.nosync-fix]\nunsafe-fixes = true\n")
    path = write(project, "train.py", UNSAFE_ONLY)
    (kept,) = fix_paths([str(path)], unsafe_fixes=False)  # an argument overrides the file
    assert not kept.written and path.read_text() == UNSAFE_ONLY
    (fixed,) = fix_paths([str(path)])
    assert fixed.written and path.read_text() != UNSAFE_ONLY


def test_fix_paths_explicit_settings_isolated_and_config(tmp_path: Path) -> None:
    from nosync_fix import Settings, fix_paths

    project, path = _library_project(tmp_path, '[tool.nosync-fix]\nignore = ["NSY201"]\n')
    (isolated,) = fix_paths([str(path)], write=False, isolated=True)
    assert isolated.changed
    (explicit,) = fix_paths([str(path)], write=False, settings=Settings())  # used as given
    assert explicit.changed
    other = write(tmp_path, "other.toml", '[tool.nosync-fix]\nignore = ["NSY9"]\n')
    (configured,) = fix_paths([str(path)], write=False, config=other)
    assert configured.changed
    assert path.read_text() == TRAIN


def test_fix_paths_fix_false_reports_only_unless_write_is_given(tmp_path: Path) -> None:
    from nosync_fix import fix_paths

    project, path = _library_project(tmp_path, "[tool.nosync-fix]\nfix = false\n")
    (reported,) = fix_paths([str(path)])
    assert not reported.written and path.read_text() == TRAIN
    assert reported.result is not None and [f.code for f in reported.result.findings] == \
        ["NSY201"]
    (written,) = fix_paths([str(path)], write=True)
    assert written.written and path.read_text() == FIXED


def test_fix_paths_broken_pyproject_raises_config_error(tmp_path: Path) -> None:
    from nosync_fix import ConfigError, fix_paths

    project, path = _library_project(tmp_path, "[tool.nosync-fix]\nselekt = []\n")
    with pytest.raises(ConfigError, match="unknown key 'selekt'"):
        fix_paths([str(path)])
    assert path.read_text() == TRAIN


# -- input that parses but does not compile, whatever the mode ---------------------------------

NOT_COMPILING = [
    ("late_future.py", 'import os\nfrom __future__ import annotations\n',
     "does not compile: from __future__ imports must occur at the beginning of the file "
     "at line 2"),
    ("unbound_nonlocal.py", "def g():\n    nonlocal y\n    y = 1\n",
     "does not compile: no binding for nonlocal 'y' found at line 2"),
    ("module_nonlocal.py", "import torch\nnonlocal x\n",
     "does not compile: nonlocal declaration not allowed at module level at line 2"),
    # with a finding whose fix is not applied (unsafe): nothing made the fix's check run
    ("with_finding.py", UNSAFE_ONLY + "\n\ndef g():\n    nonlocal y\n",
     "does not compile: no binding for nonlocal 'y' found at line 12"),
]


@pytest.mark.parametrize("mode", [["--check"], ["--no-fix"], ["--diff"], []])
@pytest.mark.parametrize("name, data, words", NOT_COMPILING)
def test_input_that_does_not_compile_is_an_error_in_every_mode(
        project: Path, mode: list[str], name: str, data: str, words: str) -> None:
    bad = write(project, name, data)
    good = write(project, "good.py", TRAIN)
    result = invoke("--isolated", *mode, ".")
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2, result.output
    assert errors == [f"error: {name}: {words} (Python parses it, but its compiler rejects "
                      "it); file left unchanged"]
    assert "All checks passed!" not in result.output
    assert "good.py" in result.output or good.read_text() == FIXED
    assert bad.read_text() == data
    again = invoke("--isolated", *mode, ".")  # answered from the cache: the same error
    assert again.exit_code == 2 and errors[0] in again.output


def test_input_that_does_not_compile_on_stdin(project: Path) -> None:
    result = invoke("--isolated", "--check", "-", input="nonlocal x\n")
    assert result.exit_code == 2
    assert "error: -: does not compile: nonlocal declaration not allowed at module level" \
        in result.output
    fixed = invoke("--isolated", "-", input="nonlocal x\n")
    assert fixed.exit_code == 2 and fixed.stdout == "nonlocal x\n"


def test_check_code_raises_for_input_that_does_not_compile() -> None:
    from nosync_fix import check_code

    with pytest.raises(ValueError, match="does not compile"):
        check_code("nonlocal x\n")
