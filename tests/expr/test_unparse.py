"""``to_source`` is the parser's inverse: every expression of the bundled catalog and of the
conformance corpus prints as text that parses back into the same tree (offsets aside) and, run on
the sample workloads, gives the same results or the same error."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.errors import ExpressionError
from workload_map.expr import ast as A
from workload_map.expr import compile_expression, parse_tree, to_source
from workload_map.expr.unparse import definition_source

from .samples import INPUTS
from .test_conformance import CASES

CATALOG_DIR = Path(__file__).resolve().parents[2] / "src/workload_map/catalog/data"
# Keys whose values run on the workload object or a pod (jq), wherever they sit in a definition.
_JQ_KEYS = {
    "path",
    "expression",
    "keyPath",
    "idPath",
    "instanceIdPath",
    "podTemplateSpecPath",
    "podSpecPath",
    "metadataPath",
    "replicasPath",
    "minReplicasPath",
    "maxReplicasPath",
}

_GANG_KEYS = {"minMember", "minSubGroup", "subGroups", "podSubGroup", "groupByKeyPaths", "filters"}


def _catalog_expressions() -> list[str]:
    found: list[str] = []

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and (key in _JQ_KEYS or key in _GANG_KEYS or key.endswith("Path")):
            found.append(node)

    for path in sorted(CATALOG_DIR.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            walk(doc)
    return sorted(set(found))


def _strip(node: Any) -> Any:
    """A tree without source offsets (and ``-x`` number literals folded), for comparison."""
    if (
        isinstance(node, A.Neg)
        and isinstance(node.operand, A.Literal)
        and isinstance(node.operand.value, (int, float))
    ):
        return ("Literal", -node.operand.value)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return (
            type(node).__name__,
            *(_strip(getattr(node, f.name)) for f in dataclasses.fields(node) if f.name != "offset"),
        )
    if isinstance(node, tuple | list):
        return tuple(_strip(v) for v in node)
    return node


EXPRESSIONS = _catalog_expressions()


def test_catalog_expressions_were_found() -> None:
    # every definition has pod, scale or status paths: far more than one per file
    assert len(EXPRESSIONS) > 150


@pytest.mark.parametrize("source", EXPRESSIONS + [c if isinstance(c, str) else c[0] for c in CASES])
def test_prints_back_to_the_same_tree(source: str) -> None:
    try:
        tree = parse_tree(source)
    except ExpressionError:
        pytest.skip("the corpus holds text that does not parse on purpose")
    text = to_source(tree)
    if "$__loc__" in source:  # its literal object prints as an object constructor (same value)
        assert _results(text, None) == _results(source, None)
        return
    assert _strip(parse_tree(text)) == _strip(tree), text


def _results(source: str, data: Any) -> Any:
    try:
        return ("ok", compile_expression(source).all(data))
    except ExpressionError as exc:
        return ("error", type(exc).__name__)


@pytest.mark.parametrize("source", EXPRESSIONS)
def test_printed_text_means_the_same(source: str) -> None:
    text = to_source(parse_tree(source))
    try:
        compile_expression(source)
    except ExpressionError:
        pytest.skip("pod-side expressions with $pod variables compile with variables only")
    for data in INPUTS:
        assert _results(text, data) == _results(source, data)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (".spec.replicas // 1", ".spec.replicas // 1"),
        ('.metadata.labels["a/b"]', '.metadata.labels["a/b"]'),
        ("(.a // 1) * ((.b // 1) - 1)", "(.a // 1) * ((.b // 1) - 1)"),
        (".a[]? | .b", "(.a | (try (.[]))) | .b"),
        ('"x\\(.a)y"', '"x\\(.a)y"'),
        ("1.5 | -.", "1.5 | (-.)"),
        ("{a, b: 1}", '{"a": (.a), "b": (1)}'),
        (". as [$x, {$y}] | $x", ". as [$x, {$y}] | $x"),
        ("def f($n): $n + 1; f(2)", "def f($n): $n + 1; f(2)"),
        ("reduce .[] as $x (0; . + $x)", "reduce .[] as $x (0; . + $x)"),
        ("if .a then 1 elif .b then 2 end", "if .a then 1 else if .b then 2 end end"),
        ("(1).x", "(1).x"),
    ],
)
def test_readable_text(source: str, expected: str) -> None:
    text = to_source(parse_tree(source))
    assert _strip(parse_tree(text)) == _strip(parse_tree(source))
    assert text == expected


def test_definition_source_prints_one_def() -> None:
    tree = parse_tree("def f($x; g): $x + g; f(1; 2)")
    assert isinstance(tree, A.FuncDef)
    assert definition_source(tree) == "def f($x; g): $x + g;"
