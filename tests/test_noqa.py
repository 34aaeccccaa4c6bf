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
