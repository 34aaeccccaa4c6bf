"""Jupyter notebooks: their code cells checked and fixed as one module, as ruff does."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nosync_fix import check_code, fix_code
from nosync_fix.cli import main
from nosync_fix.notebook import _hide_ipython

torch = pytest.importorskip("torch")


def code(*lines: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": list(lines)}


def markdown(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": [text]}


def notebook(*cells: dict, language: str = "python") -> str:
    cells = tuple({**cell, "id": f"cell-{i}"} for i, cell in enumerate(cells))
    data = {"cells": list(cells),
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": language,
                                        "name": "python3"},
                         "language_info": {"name": language}},
            "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"  # as nbformat writes


#: A training notebook: setup with a magic, a loop summing a loss (a safe fix), a shell
#: line inside the loop's cell, a cell magic, a branch on a device value (no fix).
TRAIN = notebook(
    markdown("# Training — a notebook\n"),
    code("%matplotlib inline\n", "import torch\n", "torch.manual_seed(0)\n",
         "model = torch.nn.Linear(4, 1)\n",
         "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
         "data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(5)]"),
    code("!echo starting\n", "total = 0.0\n", "for x, y in data:\n",
         "    loss = ((model(x) - y) ** 2).mean()\n", "    opt.zero_grad()\n",
         "    loss.backward()\n", "    opt.step()\n", "    total += loss.item()\n",
         'print(f"mean loss {total / len(data):.4f}")'),
    code("%%bash\n", "echo not python"),
    code("for x, y in data:\n", "    out = model(x)\n", "    if out.sum() > 0:\n",
         '        print("positive", out.mean().item())'),
)


def invoke(*args: str) -> object:
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", *args],
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result


def run_cells(text: str) -> str:
    """What the notebook prints, its code cells run in order in one namespace (IPython
    lines and cell-magic cells left out, as if they printed nothing)."""
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell in json.loads(text)["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            if source.startswith("%%"):
                continue
            lines = [line for line in source.splitlines()
                     if not line.lstrip().startswith(("%", "!"))]
            exec(compile("\n".join(lines), "<cell>", "exec"), namespace)
    return out.getvalue()


# -- what the analysis sees ------------------------------------------------------------------


@pytest.mark.parametrize(("source", "hidden"), [
    ("%matplotlib inline\nx = 1\n", ["%matplotlib inline"]),
    ("if x:\n    !ls -l\n", ["    !ls -l"]),
    ("files = !ls\nt = %timeit -o f()\n", ["files = !ls", "t = %timeit -o f()"]),
    ("model?\ntorch.nn.Linear??\n", ["model?", "torch.nn.Linear??"]),
    ("?model\n", ["?model"]),
    ("from __future__ import annotations\n", ["from __future__ import annotations"]),
    # Automagic: a line magic without its %; a shell escape continued by backslashes.
    ("pip install diffusers torch\ncd ..\n", ["pip install diffusers torch", "cd .."]),
    ("!accelerate launch train.py \\\n  --lr=1e-4 \\\n  --steps 10\nx = 1\n",
     ["!accelerate launch train.py \\", "  --lr=1e-4 \\", "  --steps 10"]),
    ("if x:\n    !ls \\\n  -l\n    y = 2\n", ["    !ls \\", "  -l"]),
    # Python that starts with a magic's name stays Python.
    ("env = {\n    'a': 1}\ntime.sleep(1)\nls -l\ntime = 3\n", []),
    # Python, not IPython: modulo on a continued line, text in a string, a comment.
    ('msg = ("%d items"\n       % n)\n', []),
    ('doc = """\n%d in a string\n!not a command\n"""\n', []),
    ("x = (1 +\n     2) \\\n    % 3\n", []),
    ("# what is this?\n", []),
])
def test_ipython_lines_are_hidden_where_a_statement_starts(source: str,
                                                          hidden: list[str]) -> None:
    python, pairs = _hide_ipython(source, 0)
    assert [original for _, original in pairs] == hidden
    compile(python, "<cell>", "exec", flags=0x2000)  # PyCF_ALLOW_TOP_LEVEL_AWAIT
    for placeholder, _ in pairs:  # each at its statement's indentation (compiled above)
        assert placeholder.lstrip().startswith("pass  # nosync-fix: IPython line ")


# -- checking --------------------------------------------------------------------------------


def test_findings_are_placed_in_their_cells_counted_as_jupyter_counts(project: Path) -> None:
    (project / "train.ipynb").write_text(TRAIN, encoding="utf-8")
    out = invoke("--check", "--unsafe-fixes", "train.ipynb").output
    assert "train.ipynb:cell 3:8:5: NSY201 [*] `total += loss.item()`" in out
    assert "train.ipynb:cell 5:3:5: NSY103" in out
    assert "train.ipynb:cell 5:4:9: NSY301" in out
    assert "loop at train.ipynb:cell 3:3: 1 host read per iteration" in out


def test_a_folder_is_walked_for_notebooks(project: Path) -> None:
    (project / "nb").mkdir()
    (project / "nb" / "train.ipynb").write_text(TRAIN, encoding="utf-8")
    out = invoke("--check", ".").output
    assert "nb/train.ipynb:cell 3:8:5: NSY201" in out
    assert "nb/train.ipynb:cell 5:3:5: NSY103" in out


def test_json_gives_the_cell_and_cell_positions_as_ruff_does(project: Path) -> None:
    (project / "train.ipynb").write_text(TRAIN, encoding="utf-8")
    found = json.loads(invoke("--check", "--output-format", "json", "train.ipynb").stdout)
    first = found[0]
    assert (first["cell"], first["code"], first["location"], first["noqa_row"]) == (
        3, "NSY201", {"row": 8, "column": 5}, 8)
    edits = first["fix"]["edits"]
    assert edits and all(e["cell"] == 3 for e in edits)
    assert "total = float(total)\n" in "".join(e["content"] for e in edits)
    assert all(e["location"]["row"] >= 8 for e in edits)  # the cell's lines, not the module's


@pytest.mark.parametrize("output_format", ["github", "sarif", "rdjson"])
def test_formats_that_address_the_files_lines_name_the_cell_instead(
        project: Path, output_format: str) -> None:
    """A cell's lines are not the lines of the JSON file: a location there would point at
    the wrong line, and a suggested edit would corrupt the file."""
    (project / "train.ipynb").write_text(TRAIN, encoding="utf-8")
    out = invoke("--check", "--output-format", output_format, "train.ipynb").stdout
    assert "cell 3, line 8, column 5: " in out
    if output_format == "github":
        assert ",line=" not in out
        return
    data = json.loads(out)
    if output_format == "sarif":
        results = data["runs"][0]["results"]
        assert results and all("region" not in r["locations"][0]["physicalLocation"]
                               and "fixes" not in r for r in results)
    else:
        diagnostics = data["diagnostics"]
        assert diagnostics and all("range" not in d["location"] and "suggestions" not in d
                                   for d in diagnostics)


def test_a_conversion_after_a_cells_loop_is_unsafe_in_a_notebook() -> None:
    """Stopping a loop is routine in a notebook, and the kernel keeps its variables: after
    an interrupt the conversion the fix adds after the loop never runs, and `total` is
    left a tensor where the original left a number."""
    found = {f.code: f for f in check_code(TRAIN, filename="train.ipynb")}
    fix = found["NSY201"].fix
    assert fix is not None and fix.applicability.value == "unsafe"
    assert "unsafe in a notebook: a loop stopped by an interrupt" in found["NSY201"].message
    # In a function the interrupt throws the function's locals away: still safe.
    in_function = {f.code: f for f in check_code(KERNEL_RUN, filename="run.ipynb")}
    assert in_function["NSY201"].fix.applicability.value == "safe"
    assert "notebook" not in in_function["NSY201"].message
    # The same file as a script: safe (an interrupt ends the program).
    script = "\n".join(
        "".join(c["source"]) for c in json.loads(TRAIN)["cells"][1:3]
        ).replace("%matplotlib inline\n", "").replace("!echo starting\n", "")
    assert {f.code: f for f in check_code(script, filename="train.py")}[
        "NSY201"].fix.applicability.value == "safe"


def test_a_notebook_of_another_language_is_not_checked() -> None:
    r_notebook = notebook(code("x <- c(1, 2)\n", "if (x > 0) print(x)"), language="R")
    assert check_code(r_notebook, filename="analysis.ipynb") == []


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "not a valid notebook: Expecting property name enclosed in double quotes"),
    ('{"cells": 3}', "not a valid notebook: no list of cells"),
    ('{"worksheets": [], "nbformat": 3}', "notebook format 3 is not supported"),
])
def test_a_broken_notebook_is_one_line_and_left_alone(project: Path, text: str,
                                                      message: str) -> None:
    path = project / "bad.ipynb"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "bad.ipynb"])
    assert result.exit_code == 2
    assert f"error: bad.ipynb: {message}" in result.output
    assert "Traceback" not in result.output
    assert path.read_text(encoding="utf-8") == text


def test_syntax_errors_name_the_cell(project: Path) -> None:
    (project / "s.ipynb").write_text(notebook(code("x = 1"), code("y = (\n")),
                                     encoding="utf-8")
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "--check", "s.ipynb"])
    assert result.exit_code == 2
    assert "cell 2, line 1" in result.output, result.output


def test_top_level_await_is_what_ipython_runs() -> None:
    text = notebook(code("import asyncio\n", "await asyncio.sleep(0)"))
    assert fix_code(text, filename="a.ipynb").error is None


# -- fixing ----------------------------------------------------------------------------------


def test_the_fix_is_written_into_its_cell_and_nothing_else_changes(project: Path) -> None:
    path = project / "train.ipynb"
    path.write_text(TRAIN, encoding="utf-8")
    invoke("--unsafe-fixes", "train.ipynb")
    fixed = path.read_text(encoding="utf-8")
    before, after = json.loads(TRAIN), json.loads(fixed)
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"], strict=True))
               if a != b]
    assert changed == [2]
    assert after["cells"][2]["source"] == [
        "!echo starting\n", "total = 0.0\n", "for x, y in data:\n",
        "    loss = ((model(x) - y) ** 2).mean()\n", "    opt.zero_grad()\n",
        "    loss.backward()\n", "    opt.step()\n", "    total += loss.detach().double()\n",
        "total = float(total)\n", 'print(f"mean loss {total / len(data):.4f}")']
    # Written as nbformat writes: the same layout, so the file's diff is the cell's.
    assert fixed == json.dumps(after, indent=1, ensure_ascii=False) + "\n"
    assert "NSY201" not in invoke("--check", "train.ipynb").output


def test_the_fixed_notebook_prints_what_it_printed(project: Path) -> None:
    result = fix_code(TRAIN, filename="train.ipynb", unsafe_fixes=True)
    assert result.changed and result.error is None
    torch.manual_seed(0)
    before = run_cells(TRAIN)
    torch.manual_seed(0)
    after = run_cells(result.fixed)
    assert before == after
    assert before.startswith("mean loss ")


def test_diff_is_per_cell_as_ruff_writes_it(project: Path) -> None:
    (project / "train.ipynb").write_text(TRAIN, encoding="utf-8")
    out = invoke("--diff", "--unsafe-fixes", "train.ipynb").stdout
    assert out.startswith("--- train.ipynb:cell 3\n+++ train.ipynb:cell 3\n")
    assert "-    total += loss.item()\n+    total += loss.detach().double()\n" in out
    assert (project / "train.ipynb").read_text(encoding="utf-8") == TRAIN


def test_a_layout_that_cannot_be_kept_is_not_written(project: Path) -> None:
    """Written by a tool that sorts no keys and indents by tabs: writing the fix would
    change every line of the file, so the notebook is left as it is, and the run says
    why (its findings still reported)."""
    odd = json.dumps(json.loads(TRAIN), indent="\t") + "\n"
    path = project / "odd.ipynb"
    path.write_text(odd, encoding="utf-8")
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "--unsafe-fixes",
                                       "odd.ipynb"])
    assert "error: odd.ipynb: fixes not written: its JSON is not laid out" in result.output
    assert "odd.ipynb:cell 3:8:5: NSY201 [*]" in result.output
    assert path.read_text(encoding="utf-8") == odd


def test_a_fix_never_moves_an_ipython_line() -> None:
    """Each hidden line comes back once, in its cell, with its own text."""
    result = fix_code(TRAIN, filename="train.ipynb", unsafe_fixes=True)
    assert result.changed
    cells = json.loads(result.fixed)["cells"]
    assert cells[1]["source"][0] == "%matplotlib inline\n"
    assert cells[2]["source"][0] == "!echo starting\n"
    assert cells[3]["source"] == ["%%bash\n", "echo not python"]


def test_notebooks_are_cached_with_their_cells(project: Path) -> None:
    (project / "train.ipynb").write_text(TRAIN, encoding="utf-8")
    runner = CliRunner()
    args = ["--isolated", "--cache-dir", str(project / ".cache"), "--unsafe-fixes", "--check",
            "train.ipynb"]
    first = runner.invoke(main, args).output
    second = runner.invoke(main, args).output
    assert "cell 3:8:5" in first and first == second
    diff_args = [*args[:-2], "--diff", "train.ipynb"]
    assert runner.invoke(main, diff_args).stdout == runner.invoke(main, diff_args).stdout
    assert "--- train.ipynb:cell 3" in runner.invoke(main, diff_args).stdout


#: Deferred prints and a device-side sum in a notebook; a cell after it that prints too.
KERNEL_RUN = notebook(
    code("%env NOSYNC_DEMO=1\n", "import torch\n", "torch.manual_seed(0)\n",
         "model = torch.nn.Linear(4, 1)\n",
         "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
         "data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]"),
    code("!echo starting\n", "def train_epoch():\n", "    total = 0.0\n",
         "    for step, (x, y) in enumerate(data):\n",
         "        loss = ((model(x) - y) ** 2).mean()\n", "        opt.zero_grad()\n",
         "        loss.backward()\n", "        opt.step()\n",
         '        print(f"step {step} loss {loss.item():.4f}")\n',
         "        total += loss.item()\n", "    return total\n", "total = train_epoch()"),
    code('print(f"mean loss {total / len(data):.4f}")'),
)


def _kernel_outputs(text: str, folder: Path) -> list[str]:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.reads(text, as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}}).execute()
    return ["".join(o.get("text", "") for o in cell.outputs) for cell in nb.cells]


@pytest.mark.slow
def test_the_fixed_notebook_shows_the_same_output_in_every_cell_of_a_kernel(
        tmp_path: Path) -> None:
    """In Jupyter, a deferred line must still appear under the cell that printed it: the
    kernel flushes ``sys.stdout`` as each cell ends, and the runtime's stream flushes its
    pending lines then."""
    result = fix_code(KERNEL_RUN, filename="run.ipynb")
    assert result.error is None and {f.code for f in result.applied} == {"NSY201", "NSY301"}
    before = _kernel_outputs(KERNEL_RUN, tmp_path)
    after = _kernel_outputs(result.fixed, tmp_path)
    assert before == after
    assert before[1].startswith("starting") and "step 2 loss" in before[1]
    assert before[2].startswith("mean loss ")


def test_a_notebook_is_measured_by_its_code_not_its_outputs(project: Path) -> None:
    """Plots saved in a notebook often weigh more than max-file-size; the analysis sees
    only the code."""
    data = json.loads(TRAIN)
    data["cells"][2]["outputs"] = [{"output_type": "display_data", "metadata": {},
                                    "data": {"image/png": "A" * 3_000_000}}]
    (project / "plots.ipynb").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    out = invoke("--check", "plots.ipynb").output
    assert "plots.ipynb:cell 3:8:5: NSY201" in out and "skipped" not in out
    small = invoke("--check", "--max-file-size", "100", "plots.ipynb").output
    assert "warning: plots.ipynb: skipped: " in small and "NSY201" not in small


def test_a_cell_with_a_future_import_is_not_rewritten() -> None:
    """An import a fix adds goes to the top of the first cell, above a `from __future__`
    line that must stay first in its cell: nothing is written."""
    text = notebook(code("from __future__ import annotations\n", "import torch\n",
                         "def f(xs):\n", "    for x in xs:\n",
                         '        print(f"{x.sum().item():.2f}")'))
    result = fix_code(text, filename="f.ipynb")
    assert result.error is not None and "`from __future__` import" in result.error.message
    assert result.fixed == text
    assert [f.code for f in result.findings] == ["NSY301"]


def test_noqa_works_in_a_cell(project: Path) -> None:
    data = json.loads(TRAIN)
    data["cells"][2]["source"][7] = "    total += loss.item()  # noqa: NSY201\n"
    (project / "q.ipynb").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    out = invoke("--check", "q.ipynb").output
    assert "NSY201" not in out and "q.ipynb:cell 5:3:5: NSY103" in out


def test_stdin_named_as_a_notebook_is_read_as_one() -> None:
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "--unsafe-fixes",
                                       "--stdin-filename", "t.ipynb", "-"], input=TRAIN)
    fixed = json.loads(result.stdout)
    assert "    total += loss.detach().double()\n" in fixed["cells"][2]["source"]
    assert "t.ipynb:cell 5:3:5: NSY103" in result.stderr


@pytest.mark.parametrize("args", [["nb.ipynb", "--entry", "main"], ["--profile", "nb.ipynb"]])
def test_nosync_verify_says_it_runs_scripts_not_notebooks(project: Path, args: list[str],
                                                          capsys) -> None:
    from nosync_fix.verify.cli import main as verify_main

    (project / "nb.ipynb").write_text(TRAIN, encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        verify_main(args)
    assert stopped.value.code == 2
    assert "export the notebook with `jupyter nbconvert --to script`" in capsys.readouterr().err


# -- round trip ------------------------------------------------------------------------------

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

#: Lines of every kind a cell mixes: Python, IPython escapes, continuations, strings.
_LINES = st.sampled_from([
    "x = 1", "if x:", "    y = x % 2", "%matplotlib inline", "!pip install torch \\",
    "  --upgrade", "pip install numpy", "cd ..", "files = !ls", "model?", '"""', "%d text",
    "total = (1 +", "         2)", "# a comment?", "", "for i in range(3):", "    print(i)",
    "from __future__ import annotations", "await f()", "ls -l", "émoji = 'ü'",
])


@hypothesis.given(st.lists(st.lists(_LINES, max_size=6), min_size=1, max_size=5),
                  st.booleans())
def test_a_notebook_written_back_unfixed_is_the_same_bytes(cells: list[list[str]],
                                                          as_lists: bool) -> None:
    """Hiding IPython lines, joining the cells and cutting them apart again loses
    nothing, whatever the cells hold (valid Python or not)."""
    from nosync_fix.notebook import Notebook

    sources = ["\n".join(lines) for lines in cells]
    text = notebook(*({**code(), "source": s.splitlines(keepends=True) if as_lists else s}
                      for s in sources))
    parsed = Notebook(text)
    assert parsed.with_module(parsed.module) == text
    assert [c.text for c in parsed.cells] == [s for s in sources
                                              if not s.lstrip().startswith("%%")]
