"""A longer fuzzing run than the test suite's: generated programs through ``fix_code``.

    python benchmarks/fuzz.py --minutes 10 [--kind grammar|node|torch|all]

Checks the properties of ``tests/test_fuzz.py`` (no exception, output compiles,
output is the input when nothing is found, ``fix(fix(x)) == fix(x)``) and, for the
training programs, that findings and fixes are the same with the pre-filter on
and off. Hypothesis draws fresh random programs in rounds until the time is up;
the first failure is shrunk, printed, and the script exits 1.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

import hypothesmith  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_fuzz import OPTIONS, check_properties  # noqa: E402
from test_prefilter import assert_same_with_and_without_prefilter  # noqa: E402
from torch_programs import torch_programs  # noqa: E402

from nosync_fix.config import Settings  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--kind", choices=("grammar", "node", "torch", "all"), default="all")
    parser.add_argument("--round", type=int, default=200, help="examples per round")
    args = parser.parse_args()
    warnings.simplefilter("ignore", SyntaxWarning)
    kinds = ("grammar", "node", "torch") if args.kind == "all" else (args.kind,)
    strategies = {"grammar": hypothesmith.from_grammar(), "node": hypothesmith.from_node(),
                  "torch": torch_programs()}
    counts = dict.fromkeys(kinds, 0)
    deadline = time.monotonic() + args.minutes * 60
    rounds = 0
    while time.monotonic() < deadline:
        kind = kinds[rounds % len(kinds)]
        rounds += 1

        @settings(max_examples=args.round, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(strategies[kind], st.sampled_from(OPTIONS))
        def run(source: str, options: dict) -> None:
            if time.monotonic() > deadline:
                return
            counts[kind] += 1  # noqa: B023 - one function per round
            check_properties(source, **options)
            if kind == "torch":  # noqa: B023
                assert_same_with_and_without_prefilter(source, Settings(unsafe_fixes=True))

        try:
            run()
        except Exception as error:  # noqa: BLE001 - report hypothesis's shrunk failure
            print(f"FAILED after {sum(counts.values())} programs ({kind}): "
                  f"{type(error).__name__}: {error}", file=sys.stderr)
            return 1
    print(f"{sum(counts.values())} programs in {args.minutes:g} min, no failure: " + ", ".join(
        f"{count} {kind}" for kind, count in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
