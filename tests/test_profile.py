"""``nosync-verify --profile``: a whole script's reads and breaks, by line, with their rules."""

from __future__ import annotations

import json
import runpy
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from nosync_fix.verify.cli import main
from nosync_fix.verify.profile import Line, Profile, profile_script, render
from nosync_fix.verify.syncs import count_syncs

SCRIPT = textwrap.dedent("""\
    import sys

    import torch

    from helpers import scale


    def main(steps):
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        total = 0.0
        for i in range(steps):
            loss = model(scale(torch.randn(8, 4))).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            total += loss.item()
            if loss > 100:
                print("diverged")
        print(f"mean loss {total / steps:.4f}")


    if __name__ == "__main__":
        main(int(sys.argv[1]))
    """)
HELPERS = textwrap.dedent("""\
    def scale(x):
        if x.abs().max() > 1e6:
            raise ValueError("input out of range")
        return x * 2
    """)


@pytest.fixture
def script(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "helpers.py").write_text(HELPERS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "helpers", raising=False)
    return tmp_path / "train.py"


def _line(profile: Profile, name: str, line: int) -> Line:
    return next(x for x in profile.lines if Path(x.filename).name == name and x.line == line)


def test_reads_are_placed_on_the_lines_of_every_file_of_the_program(script: Path) -> None:
    profile = profile_script(str(script), ["3"], device="cpu", breaks=False)
    assert profile.ended == {"reads run": "ok"}
    item = _line(profile, "train.py", 18)
    assert item.reads == Counter({"item": 3}) and item.code == "total += loss.item()"
    assert ("NSY201", "safe fix") in item.rules
    test = _line(profile, "train.py", 19)
    assert test.reads == Counter({"bool": 3}) and test.rules and test.rules[0][0] == "NSY103"
    # A module the script imports; `x` is a parameter nothing types, so no rule sees the
    # read: the gap the profile is there to show.
    guard = _line(profile, "helpers.py", 2)
    assert guard.reads == Counter({"bool": 3}) and guard.rules == []
    assert "no rule" in render(profile)
    assert profile.lines[0].count == 3  # ranked by count


def test_counts_match_the_host_read_counter(script: Path) -> None:
    profile = profile_script(str(script), ["4"], device="cpu", breaks=False)
    sys.modules.pop("helpers", None)
    saved = sys.argv[:]
    sys.argv = [str(script), "4"]
    sys.path.insert(0, str(script.parent))
    try:
        with count_syncs(str(script), "cpu") as counted:
            runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = saved
        sys.path.remove(str(script.parent))
    in_script = Counter()
    for (line, kind), n in counted.by_site.items():
        if line:
            in_script[(line, kind)] += n
    ours = Counter({(x.line, kind): n for x in profile.lines if x.filename == str(script)
                    for kind, n in x.reads.items()})
    # The counter places a read at the script's line that led to it (helpers' reads at
    # the call of scale); the profile at the innermost user line (helpers.py): the same
    # reads, once each.
    helpers = sum(sum(x.reads.values()) for x in profile.lines
                  if Path(x.filename).name == "helpers.py")
    assert sum(in_script.values()) == sum(ours.values()) + helpers
    assert all(in_script[key] == n for key, n in ours.items() if key[0] != 14)


def test_a_failing_script_still_reports_what_it_counted(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "crash.py").write_text(
        "import torch\nx = torch.ones(3)\nfor _ in range(2):\n    v = x.sum().item()\n"
        "raise RuntimeError('out of data')\n")
    monkeypatch.chdir(tmp_path)
    profile = profile_script("crash.py", [], device="cpu", breaks=False)
    assert profile.ended == {"reads run": "RuntimeError: out of data"}
    assert _line(profile, "crash.py", 4).reads == Counter({"item": 2})


def test_the_dataloaders_own_reads_are_set_apart_from_the_loop_line(tmp_path: Path,
                                                                     monkeypatch) -> None:
    # A shuffling sampler draws its indices as a CPU tensor and reads them (`tolist`): host
    # work on every device, not a sync of the loop, so no line is charged with it.
    (tmp_path / "load.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "data = TensorDataset(torch.randn(16, 2), torch.randn(16))\n"
        "total = 0.0\n"
        "for x, y in DataLoader(data, batch_size=4, shuffle=True):\n"
        "    total += (x.sum() + y.sum()).item()\n")
    monkeypatch.chdir(tmp_path)
    profile = profile_script("load.py", [], device="cpu", breaks=False)
    assert profile.ended == {"reads run": "ok"}
    assert [(x.line, dict(x.reads)) for x in profile.lines] == [(6, {"item": 4})]
    assert profile.loader_reads > 0
    assert "reads made by the DataLoader itself" in render(profile)


def test_the_command_passes_the_script_its_arguments(script: Path, tmp_path: Path,
                                                     capsys) -> None:
    out = tmp_path / "profile.json"
    with pytest.raises(SystemExit) as exited:
        main(["--profile", "--no-breaks", "--device", "cpu", "--json", str(out),
              str(script), "2"])
    assert exited.value.code == 0
    data = json.loads(out.read_text())
    assert data["argv"] == ["2"]
    assert {(Path(x["file"]).name, x["line"], x["reads"]) for x in data["lines"]} >= {
        ("train.py", 18, 2), ("train.py", 19, 2)}
    text = capsys.readouterr().out
    assert "NSY201 (safe fix)" in text and "total += loss.item()" in text


def test_lines_without_a_finding_say_no_rule() -> None:
    profile = Profile("train.py", [], [Line("train.py", 3, "x.numpy()", Counter(numpy=4))],
                      ended={"reads run": "ok"})
    text = render(profile)
    assert "no rule" in text and "1 lines; 1 with no rule" in text


@pytest.mark.slow
def test_graph_breaks_of_compiled_code_are_placed_and_ranked(tmp_path: Path,
                                                             monkeypatch) -> None:
    (tmp_path / "compiled.py").write_text(textwrap.dedent("""\
        import torch


        @torch.compile(backend="aot_eager")
        def scaled(x):
            print("scaling")
            return x * 2


        for _ in range(3):
            y = scaled(torch.ones(2))
        """))
    monkeypatch.chdir(tmp_path)
    profile = profile_script("compiled.py", [], device="cpu", breaks=True)
    assert profile.ended == {"breaks run": "ok", "reads run": "ok"}
    printed = _line(profile, "compiled.py", 6)
    assert sum(printed.breaks.values()) >= 1 and printed.rules[0][0] == "NSY304"
