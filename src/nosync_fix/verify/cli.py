"""The ``nosync-verify`` command line.

Exit codes: 0 when the rewrite behaves like the original and has no more graph
breaks and no more syncs; 1 otherwise; 2 for usage errors (one line on stderr).
torch is imported only once the arguments are known to be usable.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from ..notebook import is_notebook

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _codes(values: Sequence[str]) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(c.strip() for v in values for c in v.split(",") if c.strip())


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
               epilog="See also: nosync-verify --profile SCRIPT [ARGS]... (where a whole script "
                      "syncs; nosync-verify --profile --help).")
@click.argument("file", required=False, metavar="FILE")
@click.option("-m", "--module", "module", default=None, metavar="PKG.MOD[:ENTRY]",
              help="Verify a module found on the current directory and sys.path instead of "
                   "FILE, as `python -m` would run it (relative imports work). FILE may also "
                   "be written PKG.MOD:ENTRY; a FILE inside a package is run as its module.")
@click.option("--entry", default=None, metavar="NAME",
              help="The function of FILE to run and measure (required unless given as "
                   "PKG.MOD:ENTRY).")
@click.option("--inputs", default="example_inputs", show_default=True, metavar="NAME",
              help="A function of FILE that takes a seed (and optionally device=) and returns "
                   "the entry's arguments: a tuple, or (args, kwargs).")
@click.option("--after", "after", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The rewritten file to verify [default: the fixer's output for FILE].")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
              show_default=True, help="Where to run: auto picks CUDA when it is available.")
@click.option("--trials", type=click.IntRange(min=1), default=20, show_default=True,
              help="Input seeds on which the two versions must agree.")
@click.option("--seed", type=int, default=0, show_default=True, help="The first seed.")
@click.option("--compiled-trials", type=click.IntRange(min=0), default=3, show_default=True,
              help="Of the trials, how many also run both versions compiled with --backend: "
                   "the compiled rewrite must agree with the eager original (or, where the "
                   "compiler itself changes a value, with the compiled original).")
@click.option("--backend", type=click.Choice(["inductor", "aot_eager", "eager"]),
              default="inductor", show_default=True,
              help="torch.compile backend: graphs, breaks and compiled time.")
@click.option("--repeat", type=click.IntRange(min=1), default=10, show_default=True,
              help="Timed calls per version and mode (the first call and one more "
                   "warm-up call are not timed). The original is timed a second time beside "
                   "them: its distance from itself is the noise band printed beside each "
                   "ratio, and a ratio inside the band is a warning, not a claim.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, writable=True),
              default=None, metavar="OUT", help="Also write the report as JSON ('-': stdout).")
@click.option("--select", multiple=True, metavar="CODES",
              help="Fixer rules to apply (when --after is not given).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Fixer rules not to apply.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply the fixes marked unsafe.")
@click.option("--rules", "rules", multiple=True, metavar="CODES",
              help="The rules the --after rewrite applies: their documented tolerances apply "
                   "[default: exact values and byte-identical printed text]. Without --after "
                   "the rules of the applied fixes set it.")
@click.option("--threads", type=click.IntRange(min=0), default=1, show_default=True,
              help="torch intra-op threads for the run (0: torch's choice). One thread keeps "
                   "timings steady on a busy machine.")
@click.option("--no-timing", is_flag=True,
              help="Skip the timing: equivalence, syncs and graph breaks only (the entry is "
                   "still compiled once, with --backend).")
@click.option("--no-adversarial", is_flag=True,
              help="Compare on the seeded inputs only, not also on adversarial ones (NaN, "
                   "+-inf, zeros, negative and huge values, empty and one-element lists, on "
                   "the first two seeds; an --inputs function with an `adversarial` keyword "
                   "builds its own).")
@click.option("--search", type=click.IntRange(min=0), default=25, show_default=True,
              metavar="N",
              help="After the adversarial inputs, let hypothesis try up to N combinations of "
                   "them (any element set to 0, NaN or +-inf, tensors zeroed, negated or "
                   "scaled, lists cut, thresholds at their tie) and shrink a failing one "
                   "(0: no search).")
@click.option("--allow-untaken", is_flag=True,
              help="Pass although a condition of the rewrite was not driven both ways by "
                   "the trials (a warning, not a failure).")
def command(file: str | None, module: str | None, entry: str | None, inputs: str,
            after: str | None, device: str, trials: int, seed: int, compiled_trials: int,
            backend: str, repeat: int, json_out: str | None,
            select: tuple[str, ...], ignore: tuple[str, ...], unsafe_fixes: bool,
            rules: tuple[str, ...],
            threads: int | None, no_timing: bool, no_adversarial: bool, search: int,
            allow_untaken: bool) -> int:
    """Verify the rewrite of FILE: graph breaks, host syncs, equivalence and time.

    Runs FILE and its rewrite (the fixer's output, or --after) side by side on
    identically seeded inputs, and exits 0 only when the rewrite behaves the same
    and has no more graph breaks, no more syncs and not much more memory than the
    original.
    """
    from .core import verify
    from .loading import VerifyUsageError, resolve_module
    from .render import render

    try:
        if module is not None and file is not None:
            raise click.UsageError("give FILE or -m PKG.MOD, not both")
        spec = module if module is not None else file
        if spec is None:
            raise click.UsageError("Missing argument 'FILE'.")
        if module is not None or (":" in spec and not Path(spec).exists()):
            path, named = resolve_module(spec)
            file, entry = str(path), entry or named
        elif Path(spec).is_dir():
            raise click.UsageError(f"FILE {spec!r} is a directory")
        elif is_notebook(spec):
            raise click.UsageError(_NOTEBOOK)
        if entry is None:
            raise click.UsageError("Missing option '--entry' (or FILE as PKG.MOD:ENTRY).")
        report = verify(file, entry, inputs=inputs, after=after, device=device, trials=trials,
                        seed=seed, backend=backend, repeat=repeat, select=_codes(select),
                        ignore=_codes(ignore), unsafe_fixes=unsafe_fixes,
                        measure_time=not no_timing, threads=threads or None,
                        compiled_trials=compiled_trials, rules=_codes(rules),
                        adversarial=not no_adversarial, allow_untaken=allow_untaken,
                        search=search)
    except VerifyUsageError as error:
        raise click.UsageError(str(error)) from None
    _emit(render(report), report.as_dict(), json_out)
    return report.exit_code


def _emit(text: str, data: dict, json_out: str | None) -> None:
    """Print the report; with ``json_out``, also write it as JSON there ("-": stdout, and
    the text goes to stderr)."""
    if json_out == "-":
        click.echo(json.dumps(data, indent=2))
        click.echo(text, err=True)
        return
    click.echo(text)
    if json_out:
        try:
            with open(json_out, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2)
                handle.write("\n")
        except OSError as error:
            raise click.UsageError(f"cannot write {json_out}: {error.strerror}") from None


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100,
                                 "allow_interspersed_args": False,
                                 "ignore_unknown_options": True})
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
              show_default=True, help="Where reads count: on CUDA only reads of tensors on "
                                      "the GPU; on a CPU every read, as it would sync there.")
@click.option("--no-breaks", is_flag=True,
              help="Run the script once, counting reads only (no run for graph breaks).")
@click.option("--top", type=click.IntRange(min=1), default=None, metavar="N",
              help="Show the N lines with the most reads and breaks.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, writable=True),
              default=None, metavar="OUT", help="Also write the profile as JSON ('-': stdout).")
@click.argument("script", type=click.Path(exists=True, dir_okay=False))
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
def profile_command(device: str, no_breaks: bool, top: int | None, json_out: str | None,
                    script: str, script_args: tuple[str, ...]) -> int:
    """Run SCRIPT (with its arguments) and rank the lines of your code that read the
    device (syncs) or break a torch.compile graph, with the nosync-fix rule that fixes or
    reports each line, or "no rule".

    The options come before SCRIPT; everything after it is the script's. The script runs
    twice (once for graph breaks, once under the host-read counter): give it a short run
    (few steps, synthetic data).
    """
    from .profile import profile_script, render

    if is_notebook(script):
        raise click.UsageError(_NOTEBOOK)
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    profile = profile_script(script, list(script_args), device=device, breaks=not no_breaks)
    _emit(render(profile, top), profile.as_dict(), json_out)
    return EXIT_OK


#: nosync-fix checks notebooks; running one needs a kernel, which nosync-verify does not start.
_NOTEBOOK = ("nosync-verify runs Python files, not notebooks: export the notebook with "
             "`jupyter nbconvert --to script`, then verify the script")


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: usage errors are one line and exit 2.

    ``nosync-verify --profile SCRIPT [ARGS...]`` is the profile command (its own options
    and the script's arguments), anything else the verification of a rewrite."""
    args = list(argv) if argv is not None else sys.argv[1:]
    chosen, name = command, "nosync-verify"
    if args[:1] == ["--profile"]:
        chosen, name, args = profile_command, "nosync-verify --profile", args[1:]
    try:
        code = chosen.main(args=args, prog_name=name, standalone_mode=False)
    except click.UsageError as error:
        click.echo(f"nosync-verify: error: {error.format_message()}", err=True)
        sys.exit(EXIT_USAGE)
    except click.Abort:
        click.echo("nosync-verify: aborted", err=True)
        sys.exit(EXIT_USAGE)
    except click.ClickException as error:
        click.echo(f"nosync-verify: error: {error.format_message()}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(code if isinstance(code, int) else EXIT_OK)


if __name__ == "__main__":
    main()
