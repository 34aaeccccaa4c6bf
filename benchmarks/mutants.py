"""Run nosync-verify on the mutant catalogue: wrong rewrites it must fail, right ones it must pass.

    python benchmarks/mutants.py                 # every file under benchmarks/mutants/
    python benchmarks/mutants.py -k gated        # only the files whose name contains "gated"
    python benchmarks/mutants.py --json out.json

Each file under ``benchmarks/mutants/`` is a rewrite of one program of ``examples/``,
ending in a comment block that says what it is::

    # nosync-verify mutant: gated_unconditional_clamp     (or: control)
    # of: examples/gated_forward.py
    # entry: run
    # rules: NSY101                                        (the rules the rewrite claims)
    # class: NaN/inf handling
    # why: ...

A *mutant* is a wrong rewrite (the reason is in ``why``): the verifier must fail it.
A *control* is a right one: the verifier must pass it. Every file is verified with
``--after FILE --rules RULES`` against its example, without timing, with the
``aot_eager`` backend. For each file the script prints caught / missed (mutants) or
passed / FAILED (controls) and, for what failed verification, the check that failed
it and the first trial (seed, or adversarial input) that showed the difference.
A mutant counts as caught only by a check that no control of the same example
fails: a check that fails the right rewrites too (graph-break accounting against
a skipped frame, for instance) tells nothing about the wrong one.
Exit status 0 when at least ``--target`` of the mutants were caught and every
control passed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
CATALOGUE = ROOT / "benchmarks" / "mutants"
_FIELD = re.compile(r"^# (of|entry|rules|class|why): ?(.*)$")
_KIND = re.compile(r"^# nosync-verify (mutant|control): (\S+)$")
#: Options for every rewrite of one example, and why.
EXAMPLE_OPTIONS: dict[str, tuple[dict, str]] = {
    "examples/checked_training.py": (
        {"allow_untaken": True},
        "`assert torch.isfinite(loss)` cannot fail once the input and the softmax checks "
        "passed (log of probabilities clamped to 1e-8), and no input here drives the "
        "gradient norm to MAX_GRAD_NORM: those sides are untaken in every correct rewrite"),
}


@dataclass
class Case:
    path: str
    name: str
    kind: str  # "mutant" | "control"
    of: str
    entry: str
    rules: list[str]
    klass: str
    why: str


@dataclass
class Outcome:
    case: Case
    failed: bool = False
    #: Why the verifier failed it (its problems), empty when it passed.
    problems: list[str] = field(default_factory=list)
    #: The first failing trial: "trial N (seed S[, adversarial: ...]): path: detail".
    first_failure: str | None = None
    #: Warnings the verifier printed (untested branches ...).
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    #: The checks (see :func:`check_of`) a control of the same example fails too: a mutant
    #: failed only by those is not counted as caught.
    confounded: list[str] = field(default_factory=list)

    @property
    def checks(self) -> list[str]:
        return sorted({check_of(p) for p in self.problems})

    @property
    def caught_by(self) -> list[str]:
        """The checks that failed it and no control of its example fails; a crash of the
        verifier is no verdict and catches nothing."""
        return [c for c in self.checks if c not in self.confounded and c != "crash"]

    @property
    def ok(self) -> bool:
        """Caught (mutant) or passed (control)."""
        return bool(self.caught_by) if self.case.kind == "mutant" else not self.failed


def check_of(problem: str) -> str:
    """The verifier's check behind one of its problems."""
    for words, check in (("does not behave like", "equivalence"),
                         ("no trial could be run", "equivalence"),
                         ("raised on every trial", "equivalence"),
                         ("not driven both ways", "untaken branch"),
                         ("graph breaks", "graph breaks"),
                         ("recompiles", "recompiles"), ("falls back to eager", "recompiles"),
                         ("autograd graphs alive", "graphs kept alive"),
                         ("more syncs", "syncs"), ("copies to the host", "syncs"),
                         ("needs more memory", "memory"),
                         ("does not compile", "compile"), ("fails when", "compile"),
                         ("usage error", "usage error"), ("verifier crashed", "crash")):
        if words in problem:
            return check
    return "other"


def read_case(path: Path) -> Case:
    kind = name = None
    fields: dict[str, str] = {}
    last = None
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _KIND.match(line)
        if match:
            kind, name = match.groups()
            continue
        if kind is None:
            continue
        match = _FIELD.match(line)
        if match:
            last = match[1]
            fields[last] = match[2].strip()
        elif line.startswith("#   ") and last:
            fields[last] += " " + line[4:].strip()
    if kind is None or name is None or not {"of", "entry"} <= fields.keys():
        raise SystemExit(f"{path}: no '# nosync-verify mutant|control: NAME' block with "
                         "'# of:' and '# entry:'")
    rules = [] if fields.get("rules", "-") == "-" else [
        r.strip() for r in fields["rules"].split(",") if r.strip()]
    return Case(str(path.relative_to(ROOT)), name, kind, fields["of"], fields["entry"], rules,
                fields.get("class", ""), fields.get("why", ""))


def run_case(case: Case, options: dict) -> Outcome:
    import faulthandler

    from nosync_fix.verify.core import VerifyUsageError, verify

    if not faulthandler.is_enabled():  # a worker that dies says where (on stderr)
        faulthandler.enable(all_threads=True)

    outcome = Outcome(case)
    start = time.perf_counter()
    options = {**options, **EXAMPLE_OPTIONS.get(case.of, ({}, ""))[0]}
    try:
        report = verify(ROOT / case.of, case.entry, after=ROOT / case.path, rules=case.rules,
                        measure_time=False, **options)
    except VerifyUsageError as error:
        outcome.failed, outcome.error = True, f"usage error: {error}"
        outcome.problems = [outcome.error]
        outcome.seconds = time.perf_counter() - start
        return outcome
    outcome.seconds = time.perf_counter() - start
    outcome.failed = not report.passed
    outcome.problems = list(report.problems)
    outcome.warnings = list(report.equivalence.warnings)
    data = report.as_dict()["equivalence"]
    if data["failures"]:
        first = data["failures"][0]
        given = f", adversarial input: {first['input']}" if first.get("input") else ""
        where = "before any trial" if first["trial"] is None else (
            f"trial {first['trial']} (seed {first['seed']}{given})")
        outcome.first_failure = f"{where}: {first['path']}: {first['detail']}"
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="pattern", default="",
                        help="only files whose name contains this")
    parser.add_argument("--kind", choices=["mutant", "control"],
                        help="only the mutants, or only the controls")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--compiled-trials", type=int, default=2)
    parser.add_argument("--backend", default="aot_eager")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--target", type=float, default=0.95,
                        help="the share of mutants that must be caught [default: 0.95]")
    parser.add_argument("--json", help="also write every outcome as JSON")
    args = parser.parse_args(argv)

    cases = [read_case(p) for p in sorted(CATALOGUE.glob("*.py")) if args.pattern in p.name]
    cases = [c for c in cases if args.kind in (None, c.kind)]
    cases.sort(key=lambda c: c.kind != "mutant")  # the mutants first
    options = {"trials": args.trials, "compiled_trials": args.compiled_trials,
               "backend": args.backend}
    start = time.perf_counter()
    outcomes: list[Outcome] = []
    # fork: the parent has not imported torch, each worker imports it once.
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
        futures = {pool.submit(run_case, case, options): case for case in cases}
        for future in concurrent.futures.as_completed(futures):
            case = futures[future]
            try:
                outcome = future.result()
            except Exception as error:  # a crash of the verifier itself
                outcome = Outcome(case, failed=True, error=f"{type(error).__name__}: {error}")
                outcome.problems = [f"verifier crashed: {outcome.error}"]
            outcomes.append(outcome)
            print(_line(outcome), flush=True)
    outcomes.sort(key=lambda o: (o.case.kind, o.case.name))
    failing: dict[str, set[str]] = {}
    for o in outcomes:
        if o.case.kind == "control":
            failing.setdefault(o.case.of, set()).update(o.checks)
    for o in outcomes:
        if o.case.kind == "mutant":
            o.confounded = sorted(failing.get(o.case.of, set()) & set(o.checks))
    mutants = [o for o in outcomes if o.case.kind == "mutant"]
    controls = [o for o in outcomes if o.case.kind == "control"]
    caught = sum(o.ok for o in mutants)
    passed = sum(o.ok for o in controls)
    print()
    print(f"mutants caught: {caught}/{len(mutants)}"
          + (f" ({caught / len(mutants):.0%})" if mutants else ""))
    print(f"controls passed: {passed}/{len(controls)}")
    only_breaks = [o for o in controls if not o.ok and o.checks == ["graph breaks"]]
    if only_breaks:
        print(f"  of the others, {len(only_breaks)} failed on graph-break accounting alone "
              "(the frame stays skipped at a break no rewrite here removes)")
    for of, (extra, why) in EXAMPLE_OPTIONS.items():
        print(f"  {of}: {', '.join(f'{k}={v}' for k, v in extra.items())}: {why}")
    for o in mutants:
        if not o.ok:
            also = (f" (failed only by {', '.join(o.confounded)}, which a control of "
                    f"{o.case.of} fails too)" if o.failed else "")
            print(f"  missed {o.case.name} [{o.case.klass}]{also}: {o.case.why}")
    for o in controls:
        if not o.ok:
            print(f"  control FAILED {o.case.name}: {'; '.join(o.problems)}"
                  + (f" -- {o.first_failure}" if o.first_failure else ""))
    print(f"({time.perf_counter() - start:.0f} s, trials {args.trials}, compiled trials "
          f"{args.compiled_trials}, backend {args.backend})")
    if args.json:
        Path(args.json).write_text(json.dumps(
            [{**asdict(o), "checks": o.checks, "caught_by": o.caught_by, "ok": o.ok}
             for o in outcomes], indent=1) + "\n", encoding="utf-8")
    target_met = not mutants or caught >= args.target * len(mutants)
    return 0 if target_met and passed == len(controls) else 1


def _line(outcome: Outcome) -> str:
    case = outcome.case
    if case.kind == "mutant":
        status = "caught" if outcome.caught_by else "MISSED"
    else:
        status = "passed" if not outcome.failed else "FAILED"
    text = f"{status:7} {case.kind:7} {case.name} [{case.klass}] ({outcome.seconds:.0f} s)"
    if outcome.failed:
        text += f"\n          checks: {', '.join(outcome.checks)}"
        text += "\n          by: " + _short("; ".join(outcome.problems))
        if outcome.first_failure:
            text += "\n          first: " + _short(outcome.first_failure)
    return text


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


if __name__ == "__main__":
    raise SystemExit(main())
