"""The ``nosync-fix`` command line (ruff's conventions)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import click

from . import __version__
from .cache import Cache, default_folder
from .config import (
    DEFAULT_LINE_LENGTH,
    ConfigError,
    Settings,
    config_for_paths,
    formatter_line_length,
    parse_size,
    project_settings,
    search_start,
    too_large,
)
from .findings import Finding
from .report import FORMATS, applied_findings, errors, machine, remaining_findings, summarize, text
from .report.statistics import applicable_findings, statistics_json
from .rules import rule_by_code
from .runner import FileOutcome, Mode, run

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
#: Stopped by Ctrl-C: 128 + SIGINT, as shells report it.
EXIT_INTERRUPTED = 130
_PROGRESS_MIN_FILES = 50


def _codes(values: Sequence[str]) -> tuple[str, ...] | None:
    """Comma-separated and repeated options, flattened; None when not given."""
    if not values:
        return None
    return tuple(c.strip() for v in values for c in v.split(",") if c.strip())


def _color_enabled(no_color: bool) -> bool:
    return (not no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty())


def _fail(message: str) -> None:
    click.echo(f"nosync-fix: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("paths", nargs=-1, type=str)
@click.option("--diff", is_flag=True,
              help="Write nothing; print the diffs of the fixes. Exit 1 if any file would change.")
@click.option("--check", is_flag=True,
              help="Write nothing; list the findings. Exit 1 if there are any.")
@click.option("--fix/--no-fix", "fix", default=None,
              help="Fix files in place (the default), or only list the findings, as --check "
                   "does; the later flag wins (also: fix = false).")
@click.option("--unsafe-fixes", "unsafe_fixes", flag_value=True, default=None,
              help="Also apply fixes marked unsafe (see --explain CODE).")
@click.option("--select", multiple=True, metavar="CODES",
              help="Rules to enable: codes or prefixes (NSY201, NSY2, ALL). Replaces the config.")
@click.option("--extend-select", multiple=True, metavar="CODES",
              help="Rules to enable on top of the selection.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rules to disable.")
@click.option("--output-format", type=click.Choice(FORMATS), default="text", show_default=True,
              help="How findings are printed.")
@click.option("--statistics", is_flag=True,
              help="Print counts per rule instead of findings (text or json output).")
@click.option("--exit-zero", is_flag=True,
              help="Exit 0 even when findings remain or a diff is printed (errors still exit 2).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes [default: all cores].")
@click.option("--no-cache", is_flag=True,
              help="Analyse every file, neither reading nor writing the cache.")
@click.option("--cache-dir", default=None, metavar="PATH", type=click.Path(file_okay=False),
              help="Where the cache lives [default: a folder per project in the user's "
                   "cache, $XDG_CACHE_HOME/nosync-fix or ~/.cache/nosync-fix].")
@click.option("--exclude", multiple=True, metavar="GLOBS",
              help="Files and folders to skip, replacing the default list.")
@click.option("--extend-exclude", multiple=True, metavar="GLOBS",
              help="Files and folders to skip, on top of the default list.")
@click.option("--force-exclude/--no-force-exclude", "force_exclude", default=None,
              help="Apply the excludes to paths named on the command line too, as "
                   "pre-commit needs (also: force-exclude = true).")
@click.option("--max-file-size", metavar="SIZE", default=None,
              help="Skip larger files, with a warning: bytes, or '2MB', '500KB' "
                   "[default: 2MB].")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Read settings from this pyproject.toml (or a TOML file of our keys).")
@click.option("--isolated", is_flag=True, help="Ignore every configuration file.")
@click.option("--show-fixes", is_flag=True,
              help="List the findings fixed, per file and rule; with --diff or --check, "
                   "those that would be fixed.")
@click.option("--all-paths", "all_paths", flag_value=True, default=None,
              help="Report findings outside hot paths (loops, forward, *_step, compiled).")
@click.option("--stdin-filename", default=None, metavar="PATH",
              help="The name of the source read from stdin (path '-'), for messages and config.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("-v", "--verbose", is_flag=True, help="Say which config and files were used.")
@click.option("--no-color", is_flag=True, help="No colours (also: the NO_COLOR variable).")
@click.option("--list-rules", is_flag=True, help="Print the rules table and exit.")
@click.option("--explain", metavar="CODE", default=None, help="Print a rule's page and exit.")
@click.version_option(__version__, "--version", prog_name="nosync-fix")
def main(paths: tuple[str, ...], diff: bool, check: bool, fix: bool | None,
         unsafe_fixes: bool | None,
         select: tuple[str, ...], extend_select: tuple[str, ...], ignore: tuple[str, ...],
         output_format: str, statistics: bool, exit_zero: bool, jobs: int | None,
         no_cache: bool, cache_dir: str | None, exclude: tuple[str, ...],
         extend_exclude: tuple[str, ...], force_exclude: bool | None,
         max_file_size: str | None, config_path: str | None,
         isolated: bool, show_fixes: bool, all_paths: bool | None, stdin_filename: str | None,
         quiet: bool, verbose: bool, no_color: bool, list_rules: bool,
         explain: str | None) -> None:
    """Find and fix host reads of device values (syncs and graph breaks) in PyTorch code.

    Fixes PATHS in place (files and folders; '-' reads stdin and writes stdout),
    then lists what is left. Use --diff, --check or --no-fix to write nothing.
    """
    color = _color_enabled(no_color)
    if list_rules:
        _print_rules()
        return
    if explain is not None:
        rule = rule_by_code(explain)
        if rule is None:
            _fail(f"unknown rule code {explain!r}; see --list-rules")
        click.echo(rule.page().rstrip())  # type: ignore[union-attr]
        return

    if statistics and output_format not in ("text", "json"):
        _fail(f"--statistics works with --output-format text or json, not {output_format}")
    paths = paths or (".",)
    try:
        settings = _load_settings(paths, config_path, isolated, verbose)
        settings = settings.with_overrides(
            select=_codes(select),
            ignore=(settings.ignore + _codes(ignore)) if ignore else None,  # type: ignore
            extend_select=(settings.extend_select + _codes(extend_select))  # type: ignore
            if extend_select else None,
            unsafe_fixes=unsafe_fixes,
            fix=fix,
            all_paths=all_paths,
            exclude=_codes(exclude),
            extend_exclude=(settings.extend_exclude + _codes(extend_exclude))  # type: ignore
            if extend_exclude else None,
            force_exclude=force_exclude,
            max_file_size=parse_size(max_file_size) if max_file_size is not None else None,
        ).validate()
    except ConfigError as error:
        _fail(str(error))
        return

    # --diff and --check never write, whatever --fix or the configuration says.
    mode = Mode.DIFF if diff else Mode.CHECK if check or not settings.fix else Mode.FIX
    with_edits = output_format in machine.FORMATS_WITH_EDITS
    if paths == ("-",):
        try:
            code = _run_stdin(settings, mode, stdin_filename or "-", output_format, color,
                              exit_zero)
        except KeyboardInterrupt:
            _interrupted(None)
        sys.exit(code)

    started = time.perf_counter()
    progress = _progress_printer() if (sys.stderr.isatty() and not quiet) else None
    cache = None if no_cache else Cache.for_settings(
        cache_dir if cache_dir is not None else default_folder(settings), settings)
    try:
        outcomes = run(list(paths), settings, mode, jobs=jobs, with_edits=with_edits,
                       progress=progress, cache=cache)
    except KeyboardInterrupt:
        _interrupted(progress)
    if progress is not None:
        progress(-1, -1)
    if verbose:
        click.echo(f"Processed {len(outcomes)} files in {time.perf_counter() - started:.2f} s "
                   f"with {len(settings.rules())} rules.", err=True)
    sys.exit(_report(outcomes, settings, mode, output_format, statistics, show_fixes, quiet,
                     color, exit_zero))


def _interrupted(progress) -> NoReturn:  # type: ignore[no-untyped-def]
    """Ctrl-C: say what state the files are in and exit 130 (click would exit 1)."""
    if progress is not None:
        progress(-1, -1)
    click.echo("nosync-fix: interrupted; the files fixed before it stay fixed, "
               "no other file was written", err=True)
    sys.exit(EXIT_INTERRUPTED)


def _load_settings(paths: Sequence[str], config_path: str | None, isolated: bool,
                   verbose: bool) -> Settings:
    if isolated:
        return Settings()
    if config_path is not None:
        if not Path(config_path).is_file():
            raise ConfigError(f"config file {config_path!r} does not exist")
        found: Path | None = Path(config_path)
    else:
        found = config_for_paths(paths)
    if verbose and found is not None:
        click.echo(f"Using settings from {found}", err=True)
    elif verbose:
        formatter = formatter_line_length(search_start(paths))
        where = f" (from {formatter[1]})" if formatter else ""
        click.echo(f"No [tool.nosync-fix] settings found: using the defaults, "
                   f"line-length {formatter[0] if formatter else DEFAULT_LINE_LENGTH}{where}",
                   err=True)
    return project_settings(found, paths)


def _print_rules() -> None:
    rows = machine.rule_table()
    width = max(len(name) for _, name, _, _ in rows)
    click.echo(f"{'code':<7} {'name':<{width}} {'fix':<11} summary")
    for code, name, fix, summary in rows:
        click.echo(f"{code:<7} {name:<{width}} {fix:<11} {summary}")


def _progress_printer():  # type: ignore[no-untyped-def]
    state = {"shown": False}

    def show(done: int, total: int) -> None:
        if done < 0:
            if state["shown"]:
                click.echo("\r\033[K", nl=False, err=True)
            return
        if total >= _PROGRESS_MIN_FILES and (done % 10 == 0 or done == total):
            state["shown"] = True
            click.echo(f"\r{done}/{total} files", nl=False, err=True)

    return show


def _report(outcomes: list[FileOutcome], settings: Settings, mode: Mode, output_format: str,
            statistics: bool, show_fixes: bool, quiet: bool, color: bool,
            exit_zero: bool) -> int:
    remaining = remaining_findings(outcomes)
    failed = errors(outcomes)
    summary = summarize(outcomes, mode, settings.unsafe_fixes)
    if mode is Mode.DIFF:
        for outcome in outcomes:
            if outcome.error is None and outcome.result is not None and outcome.result.diff:
                click.echo(outcome.result.diff, nl=False)
        if show_fixes:  # stdout holds the diff alone, as with ruff and black
            for line in text.fixed_lines(applied_findings(outcomes), heading="Would fix"):
                click.echo(line, err=True)
        if not quiet:
            for line in text.summary_lines(summary, mode, settings.unsafe_fixes):
                click.echo(line, err=True)
    elif output_format == "json":
        click.echo(statistics_json(remaining, settings.unsafe_fixes) if statistics
                   else machine.to_json(remaining))
    elif output_format == "github":
        out = machine.to_github(remaining, failed)
        if out:
            click.echo(out)
    elif output_format == "sarif":
        click.echo(machine.to_sarif(remaining, failed, __version__))
    elif output_format == "rdjson":
        click.echo(machine.to_rdjson(remaining, failed, texts=machine.known_texts(outcomes)))
    else:
        if statistics:
            for line in text.statistics_lines(remaining, settings.unsafe_fixes):
                click.echo(line)
        else:
            for finding in remaining:
                click.echo(text.finding_line(finding, settings.unsafe_fixes, color), color=color)
            if mode is Mode.CHECK and not quiet:
                for line in text.loop_lines(outcomes):
                    click.echo(line)
        if show_fixes:
            for line in _fix_lines(outcomes, remaining, mode, settings.unsafe_fixes):
                click.echo(line)
        if not quiet:
            for line in text.summary_lines(summary, mode, settings.unsafe_fixes):
                click.echo(line)
    if output_format != "github" or mode is Mode.DIFF:
        for error in failed:
            click.echo(text.error_line(error, color), err=True, color=color)
    for outcome in outcomes:
        if outcome.skipped is not None:
            click.echo(text.warning_line(outcome.filename, outcome.skipped, color), err=True,
                       color=color)
    if failed:
        return EXIT_ERROR
    if exit_zero:
        return EXIT_OK
    if mode is Mode.DIFF:
        return EXIT_FINDINGS if summary.changed_files else EXIT_OK
    return EXIT_FINDINGS if remaining else EXIT_OK


def _fix_lines(outcomes: list[FileOutcome], remaining: Sequence[Finding], mode: Mode,
               unsafe_fixes: bool) -> list[str]:
    """--show-fixes: the findings fixed, or in --check the ones a fix would remove."""
    if mode is Mode.FIX:
        return text.fixed_lines(applied_findings(outcomes))
    return text.fixed_lines(applicable_findings(remaining, unsafe_fixes), heading="Would fix")


def _run_stdin(settings: Settings, mode: Mode, filename: str, output_format: str, color: bool,
               exit_zero: bool) -> int:
    from .engine import process_source

    source = sys.stdin.buffer.read()
    if settings.force_exclude and filename != "-" and settings.is_force_excluded(filename):
        if mode is Mode.FIX:
            sys.stdout.buffer.write(source)  # excluded: the input comes back as it was
            sys.stdout.flush()
        return EXIT_OK
    if len(source) > settings.max_file_size:
        click.echo(text.warning_line(filename, too_large(len(source), settings.max_file_size),
                                     color), err=True)
        if mode is Mode.FIX:
            sys.stdout.buffer.write(source)  # never lose the input
            sys.stdout.flush()
        return EXIT_OK
    result = process_source(source, filename, settings, fix=mode is not Mode.CHECK,
                            with_edits=output_format in machine.FORMATS_WITH_EDITS)
    if result.error is not None:
        if mode is Mode.FIX:
            sys.stdout.buffer.write(source)  # never lose the input
            sys.stdout.flush()
        click.echo(text.error_line(result.error, color), err=True)
        return EXIT_ERROR
    outcome = FileOutcome(filename, result=result)
    if mode is Mode.FIX:
        sys.stdout.buffer.write(result.fixed_bytes)
        sys.stdout.flush()
        for finding in result.findings:
            click.echo(text.finding_line(finding, settings.unsafe_fixes, False), err=True)
        if exit_zero:
            return EXIT_OK
        return EXIT_FINDINGS if result.findings else EXIT_OK
    return _report([outcome], settings, mode, output_format, False, False, True, color,
                   exit_zero)

