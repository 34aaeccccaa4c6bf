from __future__ import annotations

from nosync_fix.noqa import parse_suppressions


def test_line_noqa_all_and_codes() -> None:
    s = parse_suppressions("a = 1  # noqa\nb = 2  # noqa: NSY201, NSY3\nc = 3\n")
    assert s.suppresses("NSY101", 1)
    assert s.suppresses("NSY201", 2) and s.suppresses("NSY301", 2)
    assert not s.suppresses("NSY101", 2)
    assert not s.suppresses("NSY201", 3)


def test_noqa_inside_a_string_does_not_count() -> None:
    s = parse_suppressions('x = "# noqa"\n')
    assert not s.suppresses("NSY201", 1)


def test_file_level_noqa() -> None:
    s = parse_suppressions("# nosync-fix: noqa\nx = 1\n")
    assert s.suppresses_all_of_file()
    s = parse_suppressions("# nosync-fix: noqa: NSY2\nx = 1\n")
    assert not s.suppresses_all_of_file()
    assert s.suppresses("NSY201", 10) and not s.suppresses("NSY301", 10)


def test_file_noqa_must_be_its_own_line() -> None:
    s = parse_suppressions("x = 1  # nosync-fix: noqa\n")
    assert not s.suppresses_all_of_file()


def test_foreign_codes_do_not_suppress() -> None:
    s = parse_suppressions("x = 1  # noqa: E501\n")
    assert not s.suppresses("NSY201", 1)


def test_unterminated_source_falls_back_to_line_scan() -> None:
    s = parse_suppressions('x = (1  # noqa: NSY201\n')
    assert s.suppresses("NSY201", 1)


# -- the `# nosync: ignore[...]` style (issue 19: `# noqa: NSY201` is deleted by ruff's
# RUF100/RUF102 fixes unless `lint.external = ["NSY"]`) ---------------------------------------


def test_nosync_ignore_with_codes() -> None:
    s = parse_suppressions("a = 1  # nosync: ignore[NSY201, NSY3]\nb = 2\n")
    assert s.suppresses("NSY201", 1) and s.suppresses("NSY301", 1)
    assert not s.suppresses("NSY101", 1)
    assert not s.suppresses("NSY201", 2)


def test_nosync_ignore_without_codes_is_the_whole_line() -> None:
    s = parse_suppressions("a = 1  # nosync: ignore\n")
    assert s.suppresses("NSY101", 1) and s.suppresses("NSY502", 1)
    assert not s.suppresses_all_of_file()


def test_nosync_ignore_spellings() -> None:
    for comment in ("#nosync:ignore[NSY201]", "# NOSYNC: IGNORE[nsy201]",
                    "# nosync-fix: ignore[NSY201]", "# nosync : ignore [NSY201]"):
        s = parse_suppressions(f"a = 1  {comment}\n")
        assert s.suppresses("NSY201", 1), comment
        assert not s.suppresses("NSY301", 1), comment


def test_malformed_nosync_ignore_suppresses_nothing() -> None:
    # A bracket that does not hold codes must not fall back to "every code".
    for comment in ("# nosync: ignore[", "# nosync: ignore[]", "# nosync: ignore[NSY201",
                    "# nosync: ignore[*]", "# nosync: ignored", "# nosync: ignore-file"):
        s = parse_suppressions(f"a = 1  {comment}\n")
        assert not s.suppresses("NSY201", 1), comment


def test_nosync_ignore_beside_another_tools_noqa() -> None:
    s = parse_suppressions("a = 1  # noqa: E501  # nosync: ignore[NSY201]\n")
    assert s.suppresses("NSY201", 1) and not s.suppresses("NSY301", 1)
    s = parse_suppressions("a = 1  # type: ignore[attr-defined]  # nosync: ignore[NSY201]\n")
    assert s.suppresses("NSY201", 1)


def test_nosync_ignore_inside_a_string_does_not_count() -> None:
    s = parse_suppressions('x = "# nosync: ignore[NSY201]"\n')
    assert not s.suppresses("NSY201", 1)


def test_nosync_ignore_silences_a_finding_end_to_end() -> None:
    from nosync_fix import check_code

    source = ("import torch\n\n\ndef train(model, loader):\n    total = 0.0\n"
              "    for x, y in loader:\n"
              "        loss = torch.nn.functional.cross_entropy(model(x), y)\n"
              "        total += loss.item(){}\n    return total\n")
    assert [f.code for f in check_code(source.format(""))] == ["NSY201"]
    assert check_code(source.format("  # nosync: ignore[NSY201]")) == []
    assert [f.code for f in check_code(source.format("  # nosync: ignore[NSY3]"))] == ["NSY201"]


def test_what_ruff_does_with_each_style(tmp_path) -> None:
    """The README's claim, checked with the real ruff where it is installed."""
    import subprocess
    import sys

    ruff = [sys.executable, "-m", "ruff"]
    if subprocess.run([*ruff, "--version"], capture_output=True).returncode != 0:
        import pytest

        pytest.skip("ruff is not installed")
    lines = ["import os\n", "\n", "a = os.sep  # noqa: NSY201\n", "b = os.sep  # noqa\n",
             "c = os.sep  # nosync: ignore[NSY201]\n"]

    def fixed(external: bool) -> list[str]:
        folder = tmp_path / ("external" if external else "plain")
        folder.mkdir()
        (folder / "pyproject.toml").write_text(
            '[tool.ruff.lint]\nselect = ["RUF100", "RUF102"]\n'
            + ('external = ["NSY"]\n' if external else ""), encoding="utf-8")
        (folder / "m.py").write_text("".join(lines), encoding="utf-8")
        proc = subprocess.run([*ruff, "check", "--fix", "--no-cache", "m.py"], cwd=folder,
                              capture_output=True, text=True)
        if proc.returncode == 2:
            import pytest

            pytest.skip(f"this ruff does not have RUF102: {proc.stderr.strip()}")
        return (folder / "m.py").read_text(encoding="utf-8").splitlines(keepends=True)

    assert fixed(external=False)[2:] == ["a = os.sep\n", "b = os.sep\n", lines[4]]
    assert fixed(external=True)[2:] == [lines[2], "b = os.sep\n", lines[4]]
