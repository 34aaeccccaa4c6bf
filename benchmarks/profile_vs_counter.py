"""Does `nosync-verify --profile` list the lines the host-read counter sees, with its counts?

    python benchmarks/profile_vs_counter.py --mirror /work/.mirror
    python benchmarks/profile_vs_counter.py --mirror /work/.mirror --only mnist --verbose
    python benchmarks/profile_vs_counter.py --examples-only

Each program of ``benchmarks/silent_reads.py`` (the examples, and public training scripts
with synthetic data in place of downloads) is prepared in a temporary folder by that
script's recipes and run twice more: once by ``nosync-verify --profile --json`` as a user
runs it, and once under silent_reads' own counter (``--run-one``), which is written apart
from the profiler and places each read at the innermost line of the program's files. The
two must agree line for line on the program's files: the same lines, the same number of
reads on each. Reads made inside ``torch.utils.data`` (a sampler's random indices,
collation: CPU tensors on every device) both set apart from the lines; their totals must
agree too.

Exit status 1 when a line differs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import silent_reads  # noqa: E402  (benchmarks/ is not a package)


def _env(stubs: Path) -> dict[str, str]:
    path = os.pathsep.join([str(stubs / "_stubs"), str(ROOT / "src")])
    return {**os.environ, "PYTHONPATH": path, "CUDA_VISIBLE_DEVICES": "",
            "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}


def compare(program: silent_reads.Program, mirror: Path | None, verbose: bool) -> dict:
    """Run one program under both and return the per-line comparison."""
    with tempfile.TemporaryDirectory(prefix=f"profile-{program.name.replace('/', '-')}-") as tmp:
        folder = Path(tmp) / "program"
        folder.mkdir()
        files = silent_reads.prepare(program, mirror, folder)
        # The stub packages (torchvision's datasets for instance) stand in for installed
        # libraries: outside the program's folder, where the profile, like the counter,
        # does not take them for the user's code.
        stubs = Path(tmp)
        if (folder / "_stubs").exists():
            shutil.move(str(folder / "_stubs"), str(stubs / "_stubs"))
        if program.setup:
            subprocess.run([sys.executable, "-c", program.setup], cwd=folder, check=True,
                           env=_env(stubs))
        main = files[0]
        # The counter, as silent_reads runs it.
        sites_json = folder / "_sites.json"
        subprocess.run([sys.executable, str(HERE / "silent_reads.py"), "--run-one",
                        str(folder), str(main), str(sites_json), *map(str, files), "--",
                        *program.argv], cwd=folder, env=_env(stubs), capture_output=True,
                       text=True, timeout=program.timeout)
        counted = json.loads(sites_json.read_text(encoding="utf-8"))
        # The profile, as a user runs it: from the project's root (where the counter runs
        # too), its own packages importable as if installed, options before the script.
        profile_json = folder / "_profile.json"
        env = _env(stubs)
        env["PYTHONPATH"] = os.pathsep.join([str(folder), env["PYTHONPATH"]])
        done = subprocess.run([sys.executable, "-m", "nosync_fix.verify.cli", "--profile",
                               "--json", str(profile_json), str(main), *program.argv],
                              cwd=folder, env=env, capture_output=True,
                              text=True, timeout=program.timeout * 2)
        if not profile_json.exists():
            return {"name": program.name, "error": (done.stderr.strip().splitlines()
                                                    or ["no profile written"])[-1]}
        profile = json.loads(profile_json.read_text(encoding="utf-8"))
        if verbose:
            print(done.stdout[-3000:])

        def key(path: str, line: int) -> tuple[str, int]:
            return (os.path.relpath(os.path.realpath(path), os.path.realpath(folder)), line)

        theirs: Counter = Counter()
        for path, lines in counted["sites"].items():
            for line, kinds in lines.items():
                theirs[key(path, int(line))] += sum(kinds.values())
        ours: Counter = Counter()
        codes: dict[tuple[str, int], str] = {}
        rules: dict[tuple[str, int], str] = {}
        for item in profile["lines"]:
            if item["reads"]:
                place = key(item["file"], item["line"])
                ours[place] += item["reads"]
                codes[place] = item["code"]
                rules[place] = ", ".join(f"{r['code']} ({r['fix']})" for r in item["rules"]) \
                    or "no rule"
        differing = [(place, ours[place], theirs[place])
                     for place in sorted(set(ours) | set(theirs)) if ours[place] != theirs[place]]
        loader = (profile.get("loader_reads", 0), counted.get("loader", 0))
        return {
            "name": program.name, "commit": silent_reads.COMMITS.get(program.repo, "")[:12],
            "ended": profile["ended"], "counter_error": counted["error"],
            "lines": len(set(ours) | set(theirs)), "profile_reads": sum(ours.values()),
            "counter_reads": sum(theirs.values()),
            "profile_loader_reads": loader[0], "counter_loader_reads": loader[1],
            "agree": not differing and loader[0] == loader[1],
            "differing": [{"where": f"{p[0]}:{p[1]}", "profile": a, "counter": b,
                           "code": codes.get(p, "")} for p, a, b in differing],
            "top": [{"where": f"{p[0]}:{p[1]}", "reads": n, "rule": rules[p],
                     "code": codes[p]} for p, n in ours.most_common(6)],
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, help="folder of mirrored repositories")
    parser.add_argument("--only", action="append", default=[], help="programs to run")
    parser.add_argument("--examples-only", action="store_true")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    programs = silent_reads._examples()
    if not args.examples_only:
        programs += silent_reads._programs()
    if args.only:
        programs = [p for p in programs if p.name in args.only]
    results = []
    for program in programs:
        result = compare(program, args.mirror, args.verbose)
        results.append(result)
        if "error" in result:
            print(f"{program.name}: ERROR {result['error']}")
            continue
        verdict = "agree" if result["agree"] else "DIFFER"
        print(f"{program.name:<24} {result['lines']:>3} lines  profile {result['profile_reads']:>5}"
              f"  counter {result['counter_reads']:>5}  DataLoader's own: "
              f"{result['profile_loader_reads']}/{result['counter_loader_reads']}"
              f"  {verdict}")
        for top in result["top"]:
            print(f"    {top['reads']:>5}  {top['where']:<28} {top['rule']:<22} {top['code']}")
        for d in result["differing"]:
            print(f"    differs: {d['where']} profile {d['profile']} counter {d['counter']}"
                  f"  {d['code']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0 if all(r.get("agree") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
