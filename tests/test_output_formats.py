"""Machine-readable outputs checked against the tools' own schemas (issue 19, conventions):
SARIF 2.1.0 with URI formats, ruff's absolute ``url``, reviewdog's rdjson with suggestions."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from click.testing import CliRunner

from nosync_fix.cli import main
from nosync_fix.report import machine

jsonschema = pytest.importorskip("jsonschema")

DATA = Path(__file__).parent / "data"

#: A safe fix that edits two places: the added import and the deferred print.
MULTI = textwrap.dedent("""\
    import torch


    def train(model, loader):
        for x in loader:
            loss = torch.nn.functional.mse_loss(model(x), x)
            loss.backward()
            print(f"loss {loss.item():.3f}")
    """)
#: An unsafe fix (the loss may not be a device tensor) and a safe one.
ACCUMULATE = textwrap.dedent("""\
    import torch


    def train(model, loader):
        total = 0.0
        for batch in loader:
            total += model(batch).loss.item()
        return total


    def step(model, loader):
        total = 0.0
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            total += loss.item()
        return total
    """)


def invoke(*args: str):
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", *args],
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _format_checker():
    checker = jsonschema.FormatChecker()
    # Without rfc3987 (jsonschema[format]) URI formats pass unchecked: fail instead.
    for name in ("uri", "uri-reference"):
        assert name in checker.checkers, f"install jsonschema[format] to check {name!r}"
    return checker


def _errors(instance: object, schema_file: str) -> list[str]:
    schema = json.loads((DATA / schema_file).read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=_format_checker())
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(instance)]


def _is_absolute_url(text: str) -> bool:
    parts = urlsplit(text)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


# -- SARIF -------------------------------------------------------------------------------------


@pytest.fixture
def sarif(project: Path) -> dict:
    write(project, "src dir/train ä.py", ACCUMULATE)
    write(project, "multi.py", MULTI)
    return json.loads(invoke("--check", "--output-format", "sarif", ".").stdout)


def test_sarif_has_no_schema_or_format_errors(sarif: dict) -> None:
    assert len(sarif["runs"][0]["results"]) == 3
    assert _errors(sarif, "sarif-schema-2.1.0.json") == []


def test_sarif_help_uris_are_absolute_rule_pages(sarif: dict) -> None:
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    for rule in rules:
        assert _is_absolute_url(rule["helpUri"]), rule["helpUri"]
        assert rule["helpUri"] == machine.rule_url(rule["id"])
        assert rule["helpUri"].endswith(f"/docs/rules/{rule['id']}.md")


def test_sarif_uris_are_relative_to_srcroot_and_percent_encoded(project: Path,
                                                                sarif: dict) -> None:
    run = sarif["runs"][0]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file:///") and base.endswith("/")
    uris = set()
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert location["uriBaseId"] == "%SRCROOT%"
        uris.add(location["uri"])
    assert uris == {"multi.py", "src%20dir/train%20%C3%A4.py"}
    # Resolving against the base gives the file.
    resolved = unquote(urlsplit(base + "src%20dir/train%20%C3%A4.py").path)
    assert Path(resolved).resolve() == (project / "src dir" / "train ä.py").resolve()


def test_sarif_file_outside_the_working_folder_is_an_absolute_file_uri(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = write(tmp_path, "other place/train.py", ACCUMULATE)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    log = json.loads(invoke("--check", "--output-format", "sarif", str(outside)).stdout)
    assert _errors(log, "sarif-schema-2.1.0.json") == []
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": outside.as_uri()}
    assert "%20" in location["artifactLocation"]["uri"]


def test_sarif_marks_unsafe_fixes(sarif: dict) -> None:
    applicability = {}
    for result in sarif["runs"][0]["results"]:
        (fix,) = result["fixes"]
        region = result["locations"][0]["physicalLocation"]["region"]
        applicability[region["startLine"]] = fix["properties"]["applicability"]
        if fix["properties"]["applicability"] == "unsafe":
            assert "unsafe" in fix["description"]["text"]
    assert sorted(applicability.values()) == ["safe", "safe", "unsafe"]


def test_sarif_columns_count_code_points(sarif: dict) -> None:
    # Our columns count characters; SARIF's default is UTF-16 code units.
    assert sarif["runs"][0]["columnKind"] == "unicodeCodePoints"


def test_sarif_multi_place_fix_carries_every_edit(sarif: dict) -> None:
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "NSY301"]
    (change,) = result["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "multi.py", "uriBaseId": "%SRCROOT%"}
    texts = [r["insertedContent"]["text"] for r in change["replacements"]]
    assert texts[0].startswith("from nosync_fix.runtime import")
    assert "deferred_print(" in texts[1]


def test_sarif_of_a_file_error_validates(project: Path) -> None:
    write(project, "bad file.py", "def f(:\n")
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "--check",
                                       "--output-format", "sarif", "."])
    log = json.loads(result.stdout)
    assert _errors(log, "sarif-schema-2.1.0.json") == []
    (note,) = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "bad%20file.py", "uriBaseId": "%SRCROOT%"}


# -- JSON --------------------------------------------------------------------------------------


def test_json_url_is_the_absolute_rule_page(project: Path) -> None:
    write(project, "train.py", ACCUMULATE)
    items = json.loads(invoke("--check", "--output-format", "json", "train.py").stdout)
    assert items
    for item in items:
        assert _is_absolute_url(item["url"]), item["url"]
        assert item["url"] == machine.rule_url(item["code"])


def test_rule_url_base_is_the_documented_repository() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    pyproject = tomllib.loads(
        (Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    urls = pyproject["project"]["urls"]
    assert machine.REPOSITORY_URL == urls["Repository"]
    assert machine.rule_url("NSY201").startswith(urls["Documentation"])
    # The page it names exists in this checkout.
    relative = machine.rule_url("NSY201")[len(machine.REPOSITORY_URL + "/blob/main/"):]
    assert (Path(__file__).parents[1] / relative).is_file()


# -- reviewdog rdjson --------------------------------------------------------------------------


def test_rdjson_validates_and_carries_every_edit_as_a_suggestion(project: Path) -> None:
    write(project, "multi.py", MULTI)
    write(project, "train.py", ACCUMULATE)
    out = json.loads(invoke("--check", "--output-format", "rdjson", ".").stdout)
    assert _errors(out, "rdjson-DiagnosticResult.schema.json") == []
    assert out["source"]["name"] == "nosync-fix"
    by_line = {(d["location"]["path"], d["location"]["range"]["start"]["line"]): d
               for d in out["diagnostics"]}
    assert set(by_line) == {("multi.py", 8), ("train.py", 7), ("train.py", 15)}
    multi = by_line["multi.py", 8]
    assert multi["code"] == {"value": "NSY301", "url": machine.rule_url("NSY301")}
    assert multi["severity"] == "WARNING"
    assert [s["range"] for s in multi["suggestions"]] == [
        {"start": {"line": 2, "column": 1}, "end": {"line": 2, "column": 1}},
        {"start": {"line": 8, "column": 1}, "end": {"line": 9, "column": 1}},
    ]
    assert multi["suggestions"][0]["text"].startswith("from nosync_fix.runtime import")
    assert "unsafe" in by_line["train.py", 7]["message"]
    assert "unsafe" not in by_line["train.py", 15]["message"]


def test_rdjson_suggestions_rebuild_the_fixed_file(project: Path) -> None:
    path = write(project, "multi.py", MULTI)
    out = json.loads(invoke("--check", "--output-format", "rdjson", "multi.py").stdout)
    lines = MULTI.splitlines(keepends=True) + [""]
    for suggestion in sorted(out["diagnostics"][0]["suggestions"],
                             key=lambda s: s["range"]["start"]["line"], reverse=True):
        start, end = suggestion["range"]["start"], suggestion["range"]["end"]
        assert start["column"] == end["column"] == 1
        lines[start["line"] - 1:end["line"] - 1] = [suggestion["text"]]
    invoke("multi.py")
    assert "".join(lines) == path.read_text(encoding="utf-8")


def test_rdjson_columns_are_utf8_bytes(project: Path) -> None:
    # reviewdog counts columns in UTF-8 bytes; ours count characters.
    source = ACCUMULATE.replace("        total += loss.item()",
                                "        é = 1; total += loss.item()")
    write(project, "train.py", source)
    out = json.loads(invoke("--check", "--output-format", "rdjson", "train.py").stdout)
    (diag,) = [d for d in out["diagnostics"] if d["location"]["range"]["start"]["line"] == 15]
    assert diag["location"]["range"]["start"]["column"] == 9 + len("é = 1; ") + 1
    json_items = json.loads(invoke("--check", "--output-format", "json", "train.py").stdout)
    (item,) = [i for i in json_items if i["location"]["row"] == 15]
    assert item["location"]["column"] == 9 + len("é = 1; ")


def test_rdjson_reports_file_errors(project: Path) -> None:
    write(project, "bad.py", "def f(:\n")
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "--check",
                                       "--output-format", "rdjson", "."])
    out = json.loads(result.stdout)
    assert _errors(out, "rdjson-DiagnosticResult.schema.json") == []
    (diag,) = out["diagnostics"]
    assert diag["severity"] == "ERROR" and diag["location"]["path"] == "bad.py"


def test_rdjson_of_stdin_converts_columns_with_the_text_read(project: Path) -> None:
    # The file of --stdin-filename on disk differs from the buffer (an editor's unsaved one):
    # columns come from what was checked.
    write(project, "train.py", ACCUMULATE)
    source = ACCUMULATE.replace("        total += loss.item()",
                                "        é = 1; total += loss.item()")
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "--check", "--output-format",
                                       "rdjson", "--stdin-filename", "train.py", "-"],
                                input=source.encode("utf-8"), catch_exceptions=False)
    out = json.loads(result.stdout)
    (diag,) = [d for d in out["diagnostics"] if d["location"]["range"]["start"]["line"] == 15]
    assert diag["location"]["path"] == "train.py"
    assert diag["location"]["range"]["start"]["column"] == 9 + len("é = 1; ") + 1


def test_rdjson_after_a_fix_reports_what_remains(project: Path) -> None:
    write(project, "train.py", ACCUMULATE)
    out = json.loads(invoke("--output-format", "rdjson", "train.py").stdout)
    assert _errors(out, "rdjson-DiagnosticResult.schema.json") == []
    (diag,) = out["diagnostics"]  # the safe fix was applied, the unsafe one remains
    assert diag["location"]["range"]["start"] == {"line": 7, "column": 9}
    assert "unsafe" in diag["message"] and diag["suggestions"]


def test_a_notebooks_findings_validate_in_sarif_and_rdjson(project: Path) -> None:
    """A notebook's finding addresses the file without a region (a cell's lines are not
    the JSON file's): still valid SARIF 2.1.0 and rdjson."""
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": MULTI.splitlines(keepends=True)}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    write(project, "train.ipynb", json.dumps(notebook, indent=1) + "\n")
    sarif = json.loads(invoke("--check", "--output-format", "sarif", ".").stdout)
    assert sarif["runs"][0]["results"]
    assert _errors(sarif, "sarif-schema-2.1.0.json") == []
    rdjson = json.loads(invoke("--check", "--output-format", "rdjson", ".").stdout)
    assert rdjson["diagnostics"]
    assert _errors(rdjson, "rdjson-DiagnosticResult.schema.json") == []
