"""Bad and unusual input, one test each.

Invalid input: a one-line error naming the file, exit 2, the file's bytes
untouched, and every other file still processed (``good.py`` beside it is
fixed). Valid but unusual input: processed correctly, every byte that no fix
touches kept as it was.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import nosync_fix
import nosync_fix.engine as engine
import nosync_fix.files as files
from nosync_fix import fix_code
from nosync_fix.cli import main

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
#: What the rules make of TRAIN (these tests are about the engine, not one rule's rewrite).
FIXED = fix_code(TRAIN).fixed
assert FIXED != TRAIN


def invoke(*args: str):
    return CliRunner().invoke(main, ["--isolated", *args], catch_exceptions=False)


def _lines(data: bytes) -> list[bytes]:
    """Lines with their endings; only \\n, \\r\\n and \\r end a line (as Python reads)."""
    return re.findall(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", data)


def _plain(data: bytes, encoding: str) -> list[str]:
    """The lines as the rules see them: decoded, no BOM, no form feeds, newlines and
    tab indentation made plain."""
    text = data.decode(encoding).removeprefix("\ufeff")
    plain = []
    for line in _lines(text.encode("utf-8")):
        line_text = line.decode("utf-8").rstrip("\r\n")
        # A form feed in the indentation resets Python's column count.
        line_text = re.sub(r"^[ \t\f]*\f", "", line_text).replace("\x0c", "")
        body = line_text.lstrip("\t")
        plain.append("    " * (len(line_text) - len(body)) + body)
    return plain


def assert_fixed_in_place(original: bytes, output: bytes, encoding: str = "utf-8") -> None:
    """``output`` is ``original`` with the fix the rules make on the plain version of it,
    and every line that fix does not touch is kept byte for byte."""
    plain_in = _plain(original, encoding)
    expected = fix_code("\n".join(plain_in) + "\n").fixed
    assert expected != "\n".join(plain_in) + "\n", "nothing to fix: the test proves nothing"
    assert "\n".join(_plain(output, encoding)) + "\n" == expected
    assert output.startswith(b"\xef\xbb\xbf") == original.startswith(b"\xef\xbb\xbf")
    touched = set()
    matcher = difflib.SequenceMatcher(None, plain_in, expected.splitlines(), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            touched.update(range(i1, i2))
    kept = [line for i, line in enumerate(_lines(original)) if i not in touched]
    out_lines = iter(_lines(output))
    for line in kept:  # in order, byte for byte
        assert any(line == candidate for candidate in out_lines), line
    endings = {re.search(rb"(\r\n|\r|\n)?$", line).group(0) for line in _lines(original)}
    assert {re.search(rb"(\r\n|\r|\n)?$", line).group(0) for line in _lines(output)} <= endings


@pytest.fixture
def good(project: Path) -> Path:
    """A file beside the bad one, which must still be fixed."""
    path = project / "good.py"
    path.write_text(TRAIN, encoding="utf-8")
    return path


def assert_one_line_error(result, name: str, words: str) -> None:  # type: ignore[no-untyped-def]
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2, result.output
    mine = [line for line in errors if f" {name}:" in line]
    assert len(mine) == 1, result.output
    assert words in mine[0], mine[0]


# -- invalid input ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, data, words", [
    ("syntax.py", b"def f(:\n    pass\n", "cannot parse: invalid syntax at line 1"),
    ("py2_print.py", b'import torch\nprint "loss", loss.item()\n', "cannot parse"),
    ("py2_except.py", b"try:\n    pass\nexcept ValueError, e:\n    pass\n", "cannot parse"),
    ("py2_backticks.py", b"x = `y`\n", "cannot parse"),
    ("null_bytes.py", b"x = 1\x00\nfor t in ts:\n    s += t.item()\n", "null bytes"),
    ("bad_utf8.py", b"x = '\xff\xfe'\nfor t in ts:\n    s += t.item()\n",
     "cannot decode as utf-8: invalid start byte at line 1"),
    ("bad_utf8_later.py", b"x = 1\ny = 2\nz = '\xe9'\n",
     "cannot decode as utf-8: invalid continuation byte at line 3"),
    ("bad_cookie.py", b"# -*- coding: no-such-codec -*-\nx = 1\n", "cannot decode"),
    ("latin1_without_cookie.py", b"# caf\xe9\nx = 1\n", "cannot decode as utf-8"),
    ("wrong_cookie.py", b"# coding: ascii\nx = '\xe9'\n", "cannot decode as ascii"),
    ("unclosed.py", b"x = (1,\nfor t in ts:\n    s += t.item()\n", "cannot parse"),
    ("bad_indent.py", b"def f():\n  x = 1\n    y = 2\n", "cannot parse"),
])
def test_invalid_source(project: Path, good: Path, name: str, data: bytes, words: str) -> None:
    bad = project / name
    bad.write_bytes(data)
    result = invoke(".")
    assert_one_line_error(result, name, words)
    assert bad.read_bytes() == data
    assert good.read_text() == FIXED


def test_invalid_source_in_check_and_diff_modes(project: Path, good: Path) -> None:
    (project / "bad.py").write_bytes(b"print 'x'\n")
    for mode in ("--check", "--diff"):
        result = invoke(mode, ".")
        assert_one_line_error(result, "bad.py", "cannot parse")
        assert "good.py" in result.output
    assert good.read_text() == TRAIN


@pytest.mark.parametrize("name, data, words", [
    ("late_future.py", '"""Doc."""\nimport os\nfrom __future__ import annotations\n' + TRAIN,
     "does not compile: from __future__ imports must occur at the beginning of the file "
     "at line 3"),
    ("unbound_nonlocal.py", TRAIN + "\n\ndef g():\n    nonlocal y\n    y = 1\n",
     "does not compile: no binding for nonlocal 'y' found at line 16"),
])
def test_input_that_parses_but_does_not_compile(project: Path, good: Path, name: str,
                                                data: str, words: str) -> None:
    # Python's parser accepts these; its compiler does not. The fix's own check then
    # failed, and the input's problem was reported as an internal error of the fix.
    bad = project / name
    bad.write_text(data)
    result = invoke(".")
    assert_one_line_error(result, name, words)
    assert "internal error" not in result.output
    assert bad.read_text() == data
    assert good.read_text() == FIXED


PEP_695 = [
    ("type_alias.py", "type Vector = list[float]\n", "a `type` statement"),
    ("generic_function.py", "def first[T](xs: list[T]) -> T:\n    return xs[0]\n",
     "type parameters"),
    ("generic_class.py", "class Box[T]:\n    item: T\n", "type parameters"),
]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 accepts PEP 695 syntax")
@pytest.mark.parametrize("name, data, construct", PEP_695)
def test_newer_syntax_names_both_pythons(project: Path, good: Path, name: str, data: str,
                                         construct: str) -> None:
    bad = project / name
    bad.write_text(TRAIN + "\n\n" + data)
    result = invoke(".")
    running = ".".join(map(str, sys.version_info[:3]))
    assert_one_line_error(result, name, f"{construct} (PEP 695) needs Python 3.12 or newer; "
                                        f"nosync-fix is running on Python {running}")
    assert "at line 15" in result.output
    assert bad.read_text() == TRAIN + "\n\n" + data
    assert good.read_text() == FIXED


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 accepts PEP 701 syntax")
def test_pep_701_fstring_names_both_pythons(project: Path, good: Path) -> None:
    bad = project / "fstring.py"
    bad.write_text(TRAIN + 'NAME = f"{CONFIG["name"]}"\n')
    result = invoke(".")
    running = ".".join(map(str, sys.version_info[:3]))
    assert_one_line_error(result, "fstring.py", "Python 3.12 accepts more in f-strings (PEP 701")
    assert f"nosync-fix is running on Python {running}" in result.output


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 accepts PEP 701 syntax")
@pytest.mark.parametrize("data, hinted", [
    ('NAME = f"{CONFIG["name"]}"\n', True),  # the same quotes inside
    ("NAME = f'{'-'.join(CONFIG)}'\n", True),
    ('NAME = f"{CONFIG #}"\n', True),  # a comment
    ('NAME = f"{CONFIG!z}"\n', False),  # refused by Python 3.12 too
    ('NAME = f"}"\n', False),
    ('NAME = f"{*CONFIG}"\n', False),
])
def test_pep_701_hint_only_where_python_3_12_would_accept(
        project: Path, good: Path, data: str, hinted: bool) -> None:
    bad = project / "fstring.py"
    bad.write_text(TRAIN + data)
    result = invoke(".")
    assert "error: fstring.py: cannot parse: f-string" in result.output
    assert ("Python 3.12 accepts more in f-strings" in result.output) is hinted


@pytest.mark.skipif(sys.version_info < (3, 12), reason="needs Python 3.12")
@pytest.mark.parametrize("name, data, construct", PEP_695)
def test_newer_syntax_is_fixed_on_a_python_that_has_it(project: Path, name: str, data: str,
                                                       construct: str) -> None:
    path = project / name
    path.write_text(TRAIN + "\n\n" + data)
    assert invoke(".").exit_code == 0
    assert path.read_text() == FIXED + "\n\n" + data


def test_code_too_deep_for_libcst_is_refused_not_crashed(project: Path, good: Path) -> None:
    # Python accepts any number of `and` terms; LibCST's native parser overflows the C
    # stack on some ten thousand and would kill the process.
    deep = ("import torch\n\n\ndef f(ts):\n    s = 0.0\n    for t in ts:\n        s += ("
            + " and ".join(["t"] * 10000) + ").item()\n    return s\n")
    path = project / "deep.py"
    path.write_text(deep)
    result = invoke(".")
    assert_one_line_error(result, "deep.py", "levels deep, more than nosync-fix can analyse")
    assert path.read_text() == deep
    assert good.read_text() == FIXED


def test_symlink_loop_named_explicitly(project: Path, good: Path) -> None:
    os.symlink(project / "loop.py", project / "loop.py")
    os.symlink(project / "b.py", project / "a.py")
    os.symlink(project / "a.py", project / "b.py")
    os.symlink(project, project / "sub")
    result = invoke("loop.py", "a.py", ".")
    assert_one_line_error(result, "loop.py", "broken or looping symbolic link")
    assert_one_line_error(result, "a.py", "broken or looping symbolic link")
    assert good.read_text() == FIXED


def test_unreadable_file(project: Path, good: Path, monkeypatch) -> None:
    path = project / "secret.py"
    path.write_text(TRAIN)
    path.chmod(0)
    if os.geteuid() == 0:  # root reads anything: make the read fail as it would
        real_open = open

        def denying_open(name, *args, **kwargs):  # type: ignore[no-untyped-def]
            if str(name).endswith("secret.py"):
                raise PermissionError(13, "Permission denied")
            return real_open(name, *args, **kwargs)

        monkeypatch.setattr(files, "open", denying_open, raising=False)
    try:
        result = invoke(".")
        assert_one_line_error(result, "secret.py", "permission denied")
        assert good.read_text() == FIXED
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert path.read_text() == TRAIN


def test_read_only_file(project: Path, good: Path) -> None:
    path = project / "frozen.py"
    path.write_text(TRAIN)
    path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    try:
        result = invoke(".")
        assert_one_line_error(result, "frozen.py", "read-only; not written")
        assert path.read_text() == TRAIN
        assert good.read_text() == FIXED
        # Checking a read-only file is fine.
        assert invoke("--check", "frozen.py").exit_code == 1
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_file_modified_during_the_run(project: Path, good: Path, monkeypatch) -> None:
    path = project / "edited.py"
    path.write_text(TRAIN)
    edited = TRAIN + "# the user typed this while nosync-fix was running\n"
    real = engine.process_source

    def process_then_edit(source, filename, *args, **kwargs):  # type: ignore[no-untyped-def]
        result = real(source, filename, *args, **kwargs)
        if filename.endswith("edited.py"):
            Path(filename).write_text(edited)  # between the read and the write
        return result

    monkeypatch.setattr(engine, "process_source", process_then_edit)
    result = invoke("--no-cache", ".")
    assert_one_line_error(result, "edited.py", "changed on disk while nosync-fix was running")
    assert path.read_text() == edited  # the user's edit is not lost
    assert good.read_text() == FIXED


def test_failed_write_leaves_the_file_whole(project: Path, good: Path, monkeypatch) -> None:
    # Its own text, to tell its write from good.py's by the bytes written (the new file
    # may have no name to tell it by: O_TMPFILE).
    source = TRAIN + "# the disk fills up here\n"
    fixed = fix_code(source).fixed.encode()
    path = project / "full_disk.py"
    path.write_text(source)
    real_fsync = os.fsync

    def failing_fsync(descriptor: int) -> None:
        with open(f"/proc/self/fd/{descriptor}", "rb") as written:
            if written.read() == fixed:
                raise OSError(28, "No space left on device")
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    result = invoke("--no-cache", ".")
    assert_one_line_error(result, "full_disk.py", "cannot write: No space left on device")
    assert path.read_text() == source
    assert sorted(p.name for p in project.iterdir()) == ["full_disk.py", "good.py"]
    assert good.read_text() == FIXED


def test_path_that_does_not_exist(project: Path, good: Path) -> None:
    result = invoke("missing.py", "missing_folder", "good.py")
    assert_one_line_error(result, "missing.py", "no such file or folder")
    assert_one_line_error(result, "missing_folder", "no such file or folder")
    assert good.read_text() == FIXED


def test_non_python_file_named_explicitly(project: Path, good: Path) -> None:
    (project / "notes.txt").write_text("for t in ts: s += t.item()\n")
    result = invoke("notes.txt", "good.py")
    assert_one_line_error(result, "notes.txt", "not a Python source file")
    assert (project / "notes.txt").read_text() == "for t in ts: s += t.item()\n"
    assert good.read_text() == FIXED


@pytest.mark.parametrize("config, words", [
    ("[tool.nosync-fix\nselect = 1\n", "invalid TOML"),
    ("[tool.nosync-fix]\nselect = 'NSY201'\n", "select must be a list of strings"),
    ("[tool.nosync-fix]\nselect = ['NSY999']\n", "unknown rule code or prefix 'NSY999'"),
    ("[tool.nosync-fix]\nno-such-key = true\n", "unknown key 'no-such-key'"),
])
def test_broken_pyproject(project: Path, good: Path, config: str, words: str) -> None:
    (project / "pyproject.toml").write_text(config)
    result = CliRunner().invoke(main, ["."], catch_exceptions=False)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("nosync-fix: error:") and words in lines[0]
    assert good.read_text() == TRAIN  # a configuration error stops before any file


@pytest.mark.parametrize("args", [["--select", "NSY999"], ["--ignore", "XYZ"],
                                  ["--extend-select", "NSY9999"], ["--explain", "NSY000"]])
def test_unknown_rule_code(project: Path, good: Path, args: list[str]) -> None:
    result = invoke(*args, ".")
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "unknown rule code" in lines[0]
    assert good.read_text() == TRAIN


def test_invalid_input_through_a_real_parallel_run(project: Path, good: Path) -> None:
    for i in range(5):
        (project / f"train{i}.py").write_text(TRAIN)
    (project / "bad.py").write_bytes(b"print 'x'\n")
    (project / "nul.py").write_bytes(b"\x00")
    proc = subprocess.run([sys.executable, "-m", "nosync_fix", "--isolated", "-j", "2", "."],
                          capture_output=True, text=True, cwd=project,
                          env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": SRC})
    assert proc.returncode == 2
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 2 and all(e.startswith("error: ") for e in errors), proc.stderr
    assert "Found 6 findings (6 fixed)." in proc.stdout
    for i in range(5):
        assert (project / f"train{i}.py").read_text() == FIXED


# -- valid but unusual input -----------------------------------------------------------------


def run_fix(project: Path, data: bytes, name: str = "odd.py") -> bytes:
    path = project / name
    path.write_bytes(data)
    result = invoke(str(path))
    assert result.exit_code == 0, result.output
    return path.read_bytes()


def test_latin1_with_coding_cookie(project: Path) -> None:
    data = (b"# -*- coding: latin-1 -*-\n# caf\xe9 cr\xe8me\n"
            + TRAIN.encode().replace(b"total = 0.0", b"total = 0.0  # \xe9t\xe9"))
    assert_fixed_in_place(data, run_fix(project, data), "latin-1")


def test_utf8_bom(project: Path) -> None:
    data = b"\xef\xbb\xbf" + TRAIN.encode()
    assert_fixed_in_place(data, run_fix(project, data))


def test_crlf(project: Path) -> None:
    data = TRAIN.replace("\n", "\r\n").encode()
    assert_fixed_in_place(data, run_fix(project, data))


def test_mixed_newlines(project: Path) -> None:
    lines = TRAIN.encode().split(b"\n")
    data = b"\r\n".join(lines[:4]) + b"\r\n" + b"\n".join(lines[4:])
    # Untouched lines keep their own endings; the new line takes the file's first one.
    assert_fixed_in_place(data, run_fix(project, data))


def test_lone_carriage_returns(project: Path) -> None:
    data = TRAIN.encode().replace(b"import torch\n", b"import torch\r", 1)
    assert_fixed_in_place(data, run_fix(project, data))


#: TRAIN without its ``return``: the last line is the one the fix rewrites.
LAST_LINE_FIXED = TRAIN.replace("    return total\n", "")


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("final", [True, False], ids=["final-newline", "no-final-newline"])
def test_line_endings_kept_when_the_last_line_is_rewritten(project: Path, newline: str,
                                                           final: bool) -> None:
    expected = fix_code(LAST_LINE_FIXED).fixed
    assert expected.splitlines()[-1] != LAST_LINE_FIXED.splitlines()[-1]  # the last line
    data = LAST_LINE_FIXED.replace("\n", newline)
    if not final:
        data = data.removesuffix(newline)
        expected = expected.removesuffix("\n")
    out = run_fix(project, data.encode())
    assert out == expected.replace("\n", newline).encode()


def test_tabs(project: Path) -> None:
    data = TRAIN.encode().replace(b"    ", b"\t")
    assert_fixed_in_place(data, run_fix(project, data))


def test_form_feeds(project: Path) -> None:
    data = TRAIN.encode().replace(b"\n\ndef train", b"\n\x0c\ndef train").replace(
        b"    total = 0.0\n", b"\x0c    total = 0.0\n").replace(
        b"        loss.backward()\n", b"  \x0c        loss.backward()  # \x0c\n")
    assert_fixed_in_place(data, run_fix(project, data))


def test_form_feed_on_a_rewritten_line(project: Path) -> None:
    data = TRAIN.encode().replace(b"        total += loss.item()",
                                  b"\x0c        total += loss.item()")
    out = run_fix(project, data)
    assert_fixed_in_place(data, out)
    compile(out, "odd.py", "exec")


@pytest.mark.parametrize("data", [b"", b"\n", b"   \n\n", b"# only a comment",
                                  b"\xef\xbb\xbf", b"\x0c", b'"""docstring"""'])
def test_empty_and_nearly_empty_files(project: Path, data: bytes) -> None:
    path = project / "empty.py"
    path.write_bytes(data)
    for args in (["--check"], ["--diff"], []):
        result = invoke(*args, str(path))
        assert result.exit_code == 0, result.output
        assert path.read_bytes() == data


def test_five_megabyte_generated_file(project: Path) -> None:
    """Generated code (tables, stubs) with no hot read: found cold by the pre-filter."""
    parts = ["import torch\n\nTABLE = {\n"]
    parts += [f"    'key_{i}': ({i}, {i}.5, 'value {i}', [{i}, {i + 1}]),\n" for i in range(60_000)]
    parts.append("}\n\n\n")
    parts += [f"def helper_{i}(x):\n    y = x * {i}\n    return y.item() if x else {i}\n\n\n"
              for i in range(20_000)]
    data = "".join(parts).encode()
    assert len(data) >= 5 * 2**20
    path = project / "generated.py"
    path.write_bytes(data)
    result = invoke("--check", str(path))
    assert result.exit_code == 0, result.output
    assert invoke(str(path)).exit_code == 0
    assert path.read_bytes() == data


def test_large_file_with_a_fix(project: Path) -> None:
    """200 kB that LibCST must parse and the engine must splice, fixed in place."""
    helpers = "".join(f"def helper_{i}(x, y):\n    z = x * {i} + y\n    if z > {i}:\n"
                      f"        return [z, {i}]\n    return {{'k{i}': z}}\n\n\n"
                      for i in range(2_000))
    data = (TRAIN.replace("\n\ndef train", "\n\n" + helpers + "def train")).encode()
    assert len(data) > 200_000
    assert_fixed_in_place(data, run_fix(project, data, "large.py"))


@pytest.mark.parametrize("depth", [50, 190])
def test_deeply_nested_expressions_python_accepts(project: Path, depth: int) -> None:
    nested = "(" * depth + "loss" + ")" * depth
    data = TRAIN.replace("total += loss.item()", f"total += {nested}.item()").encode()
    assert_fixed_in_place(data, run_fix(project, data, "nested.py"))


def test_long_operator_chain_python_accepts(project: Path) -> None:
    chain = " + ".join(["loss"] * 2500)
    data = TRAIN.replace("total += loss.item()", f"total += ({chain}).item()").encode()
    assert_fixed_in_place(data, run_fix(project, data, "chain.py"))


@pytest.mark.parametrize("tool", ["5", '["x"]', '["nosync-fix"]', '"nosync-fix"'])
def test_a_foreign_tool_key_in_a_parent_pyproject_is_not_ours(project: Path, tool: str) -> None:
    (project / "pyproject.toml").write_text(f"tool = {tool}\n")
    (project / "pkg").mkdir()
    path = project / "pkg" / "train.py"
    path.write_text(TRAIN)
    result = CliRunner().invoke(main, ["--check", "pkg"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 1 and "NSY201" in result.output


def test_a_deeply_nested_toml_is_a_one_line_error(project: Path, good: Path) -> None:
    (project / "pyproject.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    result = CliRunner().invoke(main, ["."])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "nested too deeply" in lines[0]
    assert good.read_text() == TRAIN


@pytest.mark.parametrize("config", ['ignore = [""]', 'select = [" "]', 'extend-select = [""]',
                                    'per-file-ignores = {"a.py" = [""]}'])
def test_an_empty_rule_code_is_rejected(project: Path, good: Path, config: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.nosync-fix]\n{config}\n")
    result = CliRunner().invoke(main, ["."], catch_exceptions=False)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "empty rule code" in lines[0]
    assert good.read_text() == TRAIN


@pytest.mark.parametrize("mode", [[], ["--check"]])
def test_a_missing_path_is_not_all_checks_passed(project: Path, mode: list[str]) -> None:
    (project / "clean.py").write_text("x = 1\n")
    result = invoke(*mode, "nope.py", "clean.py")
    assert result.exit_code == 2
    assert "All checks passed" not in result.output
    assert "error: nope.py: no such file or folder" in result.output


def test_findings_of_a_file_that_could_not_be_written_are_reported(project: Path,
                                                                   good: Path) -> None:
    path = project / "frozen.py"
    path.write_text(TRAIN + "\n\ndef more(ts):\n    s = 0.0\n    for t in ts:\n"
                    "        print(t)\n    return s\n")
    path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    try:
        checked = invoke("--no-cache", "--check", "frozen.py")
        expected = [line for line in checked.output.splitlines()
                    if line.startswith("frozen.py:")]
        assert expected
        result = invoke("--no-cache", ".")
        assert result.exit_code == 2
        assert "read-only; not written" in result.output
        # Every finding of the file as it is on disk, at its place there.
        assert [line for line in result.output.splitlines()
                if line.startswith("frozen.py:")] == expected
        assert "All checks passed" not in result.output
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
