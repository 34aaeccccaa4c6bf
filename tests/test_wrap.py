"""Fixed lines over the line length are split as black splits them (issue 20)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from nosync_fix import fix_code
from nosync_fix.config import ConfigError, Settings, load_settings
from nosync_fix.wrap import wrap_new_long_lines

#: Statements as rewrites build them (one line), inside a method, all over 88 characters.
LONG = [
    'self.register_buffer("inv_freq", torch.where(seq_len > limit, self.long_inv_freq, '
    'self.original_inv_freq), persistent=False)',
    "hidden_states = torch.where(torch.isinf(hidden_states).any() | torch.isnan(hidden_states)"
    ".any(), torch.clamp(hidden_states, min=-clamp_value, max=clamp_value), hidden_states)",
    "all_losses[all_losses_start:] = torch.cat([v.reshape(1) for v in "
    "all_losses[all_losses_start:]]).tolist()",
    'call_in_graph(__name__, "logger.warning_once", "`use_cache=True` is incompatible with '
    'gradient checkpointing.")',
    "deferred_print(fmt(\"batch {} loss {:.3f} correct {}\", batch, item(loss), "
    "item(correct)))",
    "deferred_print(fmt(\"  scaled {:.2f}% lr={:.2e}\", item(loss) * 100, "
    "optimizer.param_groups[0][\"lr\"]))",
    "if untruncated_ids.shape[-1] >= text_input_ids.shape[-1] and not (text_input_ids.shape "
    "== untruncated_ids.shape and (text_input_ids == untruncated_ids).all()):\n    pass",
    "if len({(v.dtype, v.device, v.shape[1:]) for v in preds}) == 1 and preds[0].dim() > 0:"
    "\n    pass",
    # no bracket at the end: the whole value in parentheses, then one operand a line
    "y = x if (x.shape == (reference + 1).shape and (x == reference + 1).all()) else "
    "reference",
    "y = x if x.shape == reference.shape and (x == reference).all() else ref_value",
    "return total + first.sum() + second.sum() + third.sum() + fourth.sum() + bounded.sum()",
    "test_loss = test_loss.item() if isinstance(test_loss, torch.Tensor) else test_loss",
]


def _in_method(statement: str) -> str:
    return "class A:\n    def f(self):\n" + textwrap.indent(statement, " " * 8) + "\n"


def _wrapped(source: str, limit: int = 88, original: str = "") -> str:
    return wrap_new_long_lines(cst.parse_module(original), cst.parse_module(source),
                               limit).code


def _ruff() -> str | None:
    found = Path(sys.executable).with_name("ruff")
    return str(found) if found.exists() else shutil.which("ruff")


@pytest.mark.parametrize("statement", LONG, ids=range(len(LONG)))
def test_split_as_black_splits(statement: str) -> None:
    source = _in_method(statement)
    wrapped = _wrapped(source)
    assert all(len(line) <= 88 for line in wrapped.splitlines()), wrapped
    compile(wrapped, "<wrapped>", "exec")
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed")
    formatted = subprocess.run([ruff, "format", "--line-length", "88", "-"], input=source,
                               capture_output=True, text=True, check=True).stdout
    assert wrapped == formatted


def test_only_new_lines_are_split() -> None:
    source = _in_method(LONG[0])
    assert _wrapped(source, original=source) == source
    assert _wrapped(source, limit=0) == source
    assert _wrapped(source, limit=200) == source


def test_a_fix_stays_within_the_configured_length() -> None:
    source = textwrap.dedent("""\
        import torch


        class Scaler(torch.nn.Module):
            def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
                if hidden_states.dtype == torch.float16 and (torch.isinf(hidden_states).any()
                                                             or torch.isnan(hidden_states).any()):
                    clamp_value = torch.finfo(hidden_states.dtype).max - 1000
                    hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
                return hidden_states
    """)
    wide = fix_code(source, select=["NSY101"], unsafe_fixes=True,
                    settings=Settings(line_length=0)).fixed
    narrow = fix_code(source, select=["NSY101"], unsafe_fixes=True).fixed
    assert "torch.where" in narrow
    assert max(len(line) for line in wide.splitlines()) > 88
    new_lines = set(narrow.splitlines()) - set(source.splitlines())
    assert max(len(line) for line in new_lines) <= 88, narrow
    namespace_wide: dict = {}
    namespace_narrow: dict = {}
    exec(compile(wide, "wide", "exec"), namespace_wide)
    exec(compile(narrow, "narrow", "exec"), namespace_narrow)
    import torch

    half = torch.tensor([1.0, float("inf"), -float("inf")], dtype=torch.float16)
    for x in (half, half.float()):
        assert torch.equal(namespace_wide["Scaler"]()(x), namespace_narrow["Scaler"]()(x))


def test_line_length_comes_from_the_config_or_the_formatter(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.nosync-fix]\nline-length = 120\n")
    assert load_settings(pyproject).line_length == 120
    pyproject.write_text("[tool.ruff]\nline-length = 100\n[tool.nosync-fix]\n")
    assert load_settings(pyproject).line_length == 100
    pyproject.write_text("[tool.black]\nline-length = 79\n[tool.nosync-fix]\n")
    assert load_settings(pyproject).line_length == 79
    pyproject.write_text("[tool.nosync-fix]\n")
    assert load_settings(pyproject).line_length == 88
    pyproject.write_text("[tool.nosync-fix]\nline-length = -1\n")
    with pytest.raises(ConfigError, match="line-length"):
        load_settings(pyproject)


def test_a_project_without_our_table_keeps_its_formatters_line_length(tmp_path: Path) -> None:
    from nosync_fix.config import formatter_line_length, settings_for_paths

    project = tmp_path / "project"
    package = project / "src" / "package"
    package.mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.black]\nline_length = 127\n")
    assert settings_for_paths([package]).line_length == 127
    assert formatter_line_length(package) == (127, project / "pyproject.toml")
    # black formats, ruff lints without a line length of its own: black's counts
    (project / "pyproject.toml").write_text("[tool.ruff.lint]\nselect = ['E']\n"
                                            "[tool.black]\nline-length = 119\n")
    assert settings_for_paths([package]).line_length == 119
    (project / "pyproject.toml").write_text("[tool.black]\nline_length = 127\n")
    # ruff's order in one folder: .ruff.toml, ruff.toml, then pyproject.toml
    (project / "ruff.toml").write_text("line-length = 110\n")
    assert settings_for_paths([package]).line_length == 110
    (project / ".ruff.toml").write_text("line-length = 100\n")
    assert settings_for_paths([package]).line_length == 100
    # the nearest configuration wins, and one without a line length means the default
    (package / "ruff.toml").write_text("[lint]\nselect = ['E']\n")
    assert settings_for_paths([package]).line_length == 88
    # a file the formatter's owner must fix is passed over, not an error of ours
    (package / "ruff.toml").write_text("line-length = [\n")
    assert settings_for_paths([package]).line_length == 100
    (package / "ruff.toml").write_text("line-length = true\n")
    assert settings_for_paths([package]).line_length == 88
    # our own table's line length comes first, and --isolated reads nothing
    (project / "pyproject.toml").write_text("[tool.nosync-fix]\nline-length = 90\n")
    (package / "ruff.toml").unlink()
    assert settings_for_paths([package]).line_length == 90
    assert settings_for_paths([package], isolated=True).line_length == 88


def test_the_cli_splits_fixes_at_the_projects_line_length(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from nosync_fix.cli import main

    body = "".join(f"        losses_of_the_critic.append(critic_loss_value_{i}.item())\n"
                   for i in range(2))
    source = ("import torch\n\n\ndef train(model, batches):\n    losses_of_the_critic = []\n"
              "    for batch in batches:\n"
              + "".join(f"        critic_loss_value_{i} = model(batch).sum()\n"
                        for i in range(2)) + body
              + "    return losses_of_the_critic\n")
    script = tmp_path / "train.py"
    script.write_text(source)
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 60\n")
    result = CliRunner().invoke(main, ["--diff", "--unsafe-fixes", "--no-cache", "-v",
                                       str(script)])
    assert "line-length 60 (from " in result.output
    added = [line[1:] for line in result.output.splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    assert added and max(len(line) for line in added) <= 60, result.output
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 120\n")
    result = CliRunner().invoke(main, ["--diff", "--unsafe-fixes", "--no-cache", str(script)])
    assert "+        losses_of_the_critic.append(critic_loss_value_0.detach" in result.output


@pytest.mark.parametrize(("comment", "split"), [
    ("  # type: ignore[union-attr]", False),
    ("  # noqa: E501", False),
    ("  # NOQA: E501, F401", False),
    ("  # pyright: ignore", False),
    ("  # why  # type: ignore", False),  # only the pragma part is not counted
    ("  # an ordinary comment that is long", True),
])
def test_a_pragma_comment_does_not_count_towards_the_width(comment: str, split: bool) -> None:
    # 78 characters of code in a method (8 of indentation): over 88 with the comment.
    statement = "critic_losses.append(critic_loss_of_the_step.detach().clone().float())"
    original = _in_method("critic_losses.append(critic_loss_of_the_step.item())" + comment)
    wrapped = _wrapped(_in_method(statement + comment), original=original)
    assert len("        " + statement) <= 88 < len("        " + statement + comment)
    lines = wrapped.splitlines()
    assert (len(lines) > 3) is split, wrapped
    if not split:
        assert lines[2].endswith(comment.strip()), wrapped
