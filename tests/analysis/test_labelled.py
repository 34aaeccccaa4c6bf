"""The labelled set: every label in tests/analysis/labelled/*.py must hold.

See tests/analysis/labelled/README.md for the label syntax. Beyond the labels, no
HOST value may ever be classified as TENSOR: that is the mistake that turns a
codemod into a bug generator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
import pytest

from nosync_fix.analysis import Effect, Kind, ModuleAnalysis

LABELLED = Path(__file__).resolve().parent / "labelled"
_EFFECTS = {"rng": Effect.RNG, "inplace": Effect.INPLACE, "call": Effect.CALL, "io": Effect.IO,
            "control": Effect.CONTROL, "read": Effect.READ, "binding": Effect.BINDING}


@dataclass(frozen=True)
class Label:
    file: str
    line: int
    what: str  # "kind", "hot", "effects"
    code: str
    expected: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.what} {self.code!r} => {self.expected}"


def _labels() -> list[Label]:
    labels = []
    for path in sorted(LABELLED.glob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "#" not in line:
                continue
            comment = line[line.rindex("  # ") + 4:] if "  # " in line else line.strip()[2:]
            if comment.startswith("kind:"):
                for part in comment[len("kind:"):].split(";;"):
                    code, _, kind = part.rpartition("=>")
                    labels.append(Label(path.name, number, "kind", code.strip(), kind.strip()))
            elif comment in ("hot", "cold"):
                labels.append(Label(path.name, number, "hot", "", comment))
            elif comment.startswith("effects:"):
                labels.append(Label(path.name, number, "effects", "",
                                    comment[len("effects:"):].strip()))
    return labels


LABELS = _labels()
_ANALYSES: dict[str, tuple[ModuleAnalysis, list[cst.CSTNode]]] = {}


def _analysis(file: str) -> tuple[ModuleAnalysis, list[cst.CSTNode]]:
    if file not in _ANALYSES:
        source = (LABELLED / file).read_text()
        wrapper = cst.MetadataWrapper(cst.parse_module(source))
        analysis = ModuleAnalysis(wrapper)
        nodes: list[cst.CSTNode] = []

        class Collect(cst.CSTVisitor):
            def on_visit(self, node: cst.CSTNode) -> bool:
                nodes.append(node)
                return True

        wrapper.module.visit(Collect())
        _ANALYSES[file] = (analysis, nodes)
    return _ANALYSES[file]


def _normal(code: str) -> str:
    return re.sub(r"\s+", " ", code).strip()


def _find_expression(label: Label) -> cst.CSTNode:
    analysis, nodes = _analysis(label.file)
    candidates = []
    for node in nodes:
        if not isinstance(node, cst.BaseExpression):
            continue
        line, column, _, _ = analysis.md.position(node)
        if line == label.line and _normal(analysis.md.code(node)) == _normal(label.code):
            candidates.append((column, node))
    assert candidates, f"{label}: no expression with that code on the line"
    return min(candidates, key=lambda c: c[0])[1]


def _find_statement(label: Label) -> cst.CSTNode:
    analysis, nodes = _analysis(label.file)
    for node in nodes:
        if isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            line, _, _, _ = analysis.md.position(node)
            if line == label.line:
                return node
    raise AssertionError(f"{label}: no statement starts on that line")


def test_the_set_is_large_enough() -> None:
    kinds = [label for label in LABELS if label.what == "kind"]
    assert len(LABELS) >= 150, len(LABELS)
    assert {"tensor", "host", "unknown"} <= {k.expected.rstrip("?") for k in kinds}


@pytest.mark.parametrize("label", [lb for lb in LABELS if lb.what == "kind"], ids=str)
def test_kind(label: Label) -> None:
    analysis, _ = _analysis(label.file)
    node = _find_expression(label)
    got = analysis.kind(node)
    truth = label.expected.rstrip("?")
    if truth == "host":
        assert got is not Kind.TENSOR, f"{label}: HOST classified as TENSOR"
    allowed = {truth} | ({"unknown"} if label.expected.endswith("?") else set())
    assert got.value in allowed, f"{label}: analysis says {got.value}"


@pytest.mark.parametrize("label", [lb for lb in LABELS if lb.what == "hot"], ids=str)
def test_hot(label: Label) -> None:
    analysis, _ = _analysis(label.file)
    node = _find_statement(label)
    assert analysis.is_hot(node) == (label.expected == "hot"), (
        f"{label}: reason {analysis.hot.reason(node)!r}")


@pytest.mark.parametrize("label", [lb for lb in LABELS if lb.what == "effects"], ids=str)
def test_effects(label: Label) -> None:
    analysis, _ = _analysis(label.file)
    node = _find_statement(label)
    expected = Effect.NONE
    if label.expected != "pure":
        for name in label.expected.split(","):
            expected |= _EFFECTS[name.strip()]
    assert analysis.effects.of(node) == expected, f"{label}: got {analysis.effects.of(node)}"

