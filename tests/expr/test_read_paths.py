"""read_paths: static input field paths, best effort."""

from __future__ import annotations

import pytest

from workload_map.errors import ExpressionSyntaxError
from workload_map.expr import compile_expression, output_paths, read_paths


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        (".spec.a[].b // 1", [("spec", "a", "[]", "b")]),
        (".spec.replicas // 1", [("spec", "replicas")]),
        ('.metadata.labels["x/y"] | ascii_downcase', [("metadata", "labels", "x/y")]),
        (
            'any(.status.conditions[]?; .type == "Ready" and .status == "True")',
            [("status", "conditions", "[]", "type"), ("status", "conditions", "[]", "status")],
        ),
        (
            ".spec.replicatedJobs[] | .replicas * .template.spec.parallelism",
            [
                ("spec", "replicatedJobs", "[]", "replicas"),
                ("spec", "replicatedJobs", "[]", "template", "spec", "parallelism"),
            ],
        ),
        (
            '.status.conditions[]? | select(.type == "X") | .status',
            [("status", "conditions", "[]", "type"), ("status", "conditions", "[]", "status")],
        ),
        ("(.status.replicatedJobsStatus // []) | length", [("status", "replicatedJobsStatus")]),
        (".spec.items[0].name", [("spec", "items", "[]", "name")]),
        ("map(.a)", [("[]", "a")]),
        ("1", []),
    ],
)
def test_read_paths(src: str, expected: list[tuple[str, ...]]) -> None:
    assert read_paths(src) == expected
    assert read_paths(compile_expression(src)) == expected


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        (".spec.replicas // 1", [("spec", "replicas")]),
        (".spec.a[].b // 1", [("spec", "a", "[]", "b")]),
        (".spec.x | if .a then .a else .b end", [("spec", "x", "a"), ("spec", "x", "b")]),
        (".spec.items[] | select(.on) | .t", [("spec", "items", "[]", "t")]),
        (".spec.items[0].name", [("spec", "items", "[]", "name")]),
        ('.metadata.labels["x/y"]', [("metadata", "labels", "x/y")]),
        (".spec.a, .spec.b, .spec.a", [("spec", "a"), ("spec", "b")]),
        ("first(.spec.r[])", [("spec", "r", "[]")]),
        (".spec | values", [("spec",)]),
        ("(.spec.a // 1) * (.spec.b // 1)", []),
        ("{requests: .spec.r}", []),
        ("[.spec.r]", []),
        (".spec.r | length", []),
        ('"\\(.spec.r)"', []),
        ("map(.a)", []),
        (".", []),
        ("1", []),
    ],
)
def test_output_paths(src: str, expected: list[tuple[str, ...]]) -> None:
    assert output_paths(src) == expected
    assert output_paths(compile_expression(src)) == expected


@pytest.mark.parametrize(
    "src", [".spec.x | if .a then .a else .b end", "(.spec.a // 1) * 2", ".a[] | select(.b) | .c"]
)
def test_output_paths_are_read_paths(src: str) -> None:
    assert set(output_paths(src)) <= set(read_paths(src))


def test_output_paths_syntax_error() -> None:
    with pytest.raises(ExpressionSyntaxError):
        output_paths(".spec.[")
