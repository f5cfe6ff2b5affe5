"""read_paths: static input field paths, best effort."""

from __future__ import annotations

import pytest

from workload_map.expr import compile_expression, read_paths


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
