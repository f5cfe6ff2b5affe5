"""paths / assign / set_each / getpath / setpath, checked against libjq where it applies."""

from __future__ import annotations

import copy
from typing import Any

import jq
import pytest

from workload_map.errors import PathError
from workload_map.expr import compile_expression, getpath, setpath

from .samples import INPUTS, JOBSET

PATH_EXPRS = [
    ".",
    ".a",
    ".a.b.c",
    ".spec.replicatedJobs[].replicas",
    '.spec.replicatedJobs[] | select(.name == "workers") | .replicas',
    ".spec.replicatedJobs[]? | .template.spec.parallelism",
    '.status.conditions[]? | select(.type == "Suspended") | .status',
    '.metadata.annotations["x/y"]',
    ".a, .b",
    "if .spec then .spec.suspend else .status end",
    "first(.spec.replicatedJobs[]?)",
    ".spec.replicatedJobs[0].name",
    ".spec.replicatedJobs[-1]",
    'getpath(["metadata", "labels", "x"])',
    ". as $x | .metadata.name",
    ".spec.replicatedJobs[1:]",
    ".a // .b",
    "empty",
    "limit(1; .spec.replicatedJobs[]?)",
    ".nums[]?",
]


@pytest.mark.parametrize("src", PATH_EXPRS)
def test_paths_match_libjq(src: str) -> None:
    expr = compile_expression(src)
    for data in INPUTS:
        try:
            ref: Any = [tuple(p) for p in jq.compile(f"[path({src})]").input_value(data).first()]
        except ValueError:
            ref = "error"
        try:
            ours: Any = expr.paths(data)
        except Exception:
            ours = "error"
        assert ours == ref, f"{src} on {str(data)[:50]}"


@pytest.mark.parametrize("src", [p for p in PATH_EXPRS if "//" not in p and "[1:]" not in p])
def test_assign_matches_libjq_and_never_mutates(src: str) -> None:
    expr = compile_expression(src)
    for data in INPUTS:
        before = copy.deepcopy(data)
        try:
            ref: Any = jq.compile(f"({src}) = 7").input_value(data).first()
        except ValueError:
            ref = "error"
        try:
            ours: Any = expr.assign(data, 7)
        except Exception:
            ours = "error"
        assert ours == ref, f"{src} on {str(data)[:50]}"
        assert data == before


def test_assign_creates_missing_intermediates() -> None:
    expr = compile_expression('.metadata.annotations["a/b"]')
    assert expr.assign({"metadata": {}}, "1") == {"metadata": {"annotations": {"a/b": "1"}}}
    assert compile_expression(".spec.list[2].x").assign(None, 1) == {"spec": {"list": [None, None, {"x": 1}]}}


def test_assign_is_copy_on_write() -> None:
    data = copy.deepcopy(JOBSET)
    snapshot = copy.deepcopy(data)
    out = compile_expression('.spec.replicatedJobs[] | select(.name == "workers") | .replicas').assign(
        data, 9
    )
    assert data == snapshot
    assert out["spec"]["replicatedJobs"][1]["replicas"] == 9
    # untouched siblings are shared, touched containers are new
    assert out["status"] is data["status"]
    assert out["spec"]["replicatedJobs"][0] is data["spec"]["replicatedJobs"][0]
    assert out["spec"] is not data["spec"]


def test_set_each_and_length_mismatch() -> None:
    expr = compile_expression(".spec.replicatedJobs[].replicas")
    out = expr.set_each(JOBSET, [5, 6])
    assert [j["replicas"] for j in out["spec"]["replicatedJobs"]] == [5, 6]
    with pytest.raises(PathError, match="array length mismatch: expected 2 values but got 1"):
        expr.set_each(JOBSET, [5])


def test_iterate_optional_on_null_has_no_paths() -> None:
    assert compile_expression(".items[]?").paths({"items": None}) == []
    assert compile_expression(".items[]?").assign({"items": None}, 1) == {"items": None}


@pytest.mark.parametrize(
    ("src", "message"),
    [
        ("1", "Invalid path expression with result 1"),
        (".a | tostring", 'Invalid path expression with result "null"'),
        ("{a: 1}", 'Invalid path expression with result {"a":1}'),
        ("[.a]", "Invalid path expression with result [null]"),
        ("$__loc__", 'Invalid path expression with result {"file":"<top-level>","line":1}'),
    ],
)
def test_non_path_expressions_raise_path_error(src: str, message: str) -> None:
    expr = compile_expression(src)
    assert not expr.is_assignable
    with pytest.raises(PathError) as info:
        expr.paths({})
    assert info.value.message == message
    with pytest.raises(PathError):
        expr.assign({}, 1)


@pytest.mark.parametrize(
    ("src", "assignable"),
    [
        (".a.b", True),
        (".a[]", True),
        (".a[]?", True),
        (".a[] | select(.x)", True),
        ("if .a then .b else .c end", True),
        (".a, .b", True),
        ("first(.a[])", True),
        ('getpath(["a"])', True),
        (". as $x | .a", True),
        (".a // .b", False),
        ("{a: .a}", False),
        ("[.a]", False),
        (".a + 1", False),
        ("1", False),
        ("def f: .a; f", False),
    ],
)
def test_is_assignable(src: str, assignable: bool) -> None:
    assert compile_expression(src).is_assignable is assignable


def test_getpath_setpath_helpers() -> None:
    data = {"a": [1, {"b": 2}]}
    assert getpath(data, ["a", 1, "b"]) == 2
    assert getpath(data, ["x", "y"]) is None
    out = setpath(data, ["a", 1, "c"], 3)
    assert out == {"a": [1, {"b": 2, "c": 3}]}
    assert data == {"a": [1, {"b": 2}]}
    assert setpath(None, ["a", 0], 1) == {"a": [1]}
    assert setpath({"a": [1, 2]}, ["a", -1], 9) == {"a": [1, 9]}
