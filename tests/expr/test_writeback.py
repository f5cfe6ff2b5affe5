"""paths / assign / set_each / getpath / setpath, checked against libjq where it applies."""

from __future__ import annotations

import copy
from typing import Any

import jq
import pytest

from workload_map.errors import ExpressionError, ExpressionLimitError, PathError
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
    # user-defined functions are followed in path mode
    "def f: .metadata; f | .name",
    "def g(p): p | .replicas; .spec.replicatedJobs[]? | g(.template.spec.parallelism, .)",
    'def f($k): .metadata[$k]; f("name", "labels")',
    "def f(n): if n > 0 then .spec | f(n - 1) else .suspend end; f(1)",
    "def f: def g: .name; .metadata | g; f",
    "def f(x): x; f(.a?, empty)",
    "def f: .a // .b; [path(f)]",
    # reduce/foreach where libjq tracks the path (empty source, identity update, one step)
    "reduce empty as $x (.metadata; .name)",
    "reduce (1, 2) as $x (.spec; .)",
    'foreach ("metadata") as $k (.; .[$k]; .name)',
    "foreach (1, 2) as $x (.spec; .)",
    # builtins that are paths
    "nth(1; .a, .b)",
    ".spec.replicatedJobs | nth(0)",
    "limit(1.5; .a, .b, .c)",
    '.a | debug("m")',
    "last(empty)",
    "try .metadata.name catch empty",
    ". as $x | .spec?",
    # not paths: libjq and we both fail
    "to_entries",
    "limit(-1; .a)",
    "$__loc__",
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


@pytest.mark.parametrize(
    "src", [p for p in PATH_EXPRS if "//" not in p and "[1:]" not in p and "path(" not in p]
)
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
        ("$__loc__", 'Invalid path expression with result {"file":"<top-level>","li...}'),
        ("to_entries", 'Invalid path expression with result [{"key":"a","value":[1,2,3...]'),
        ("last(.a, .b)", "Invalid path expression with result null"),
        ('.s | . + "x"', 'Invalid path expression with result "012345678901234567890123..."'),
        (".a | reverse", "Invalid path expression with result [3,2,1]"),
        ("input_filename", "Invalid path expression with result null"),
        ("def f: .a | length; f", "Invalid path expression with result 3"),
    ],
)
def test_non_path_expressions_raise_path_error(src: str, message: str) -> None:
    data = {"a": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "s": "0123456789" * 4}
    expr = compile_expression(src)
    assert not expr.is_assignable
    with pytest.raises(ValueError) as ref:
        jq.compile(f"path({src})").input_value(data).all()
    with pytest.raises(PathError) as info:
        expr.paths(data)
    assert info.value.message == str(ref.value)
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
        (".a // .b", True),
        ("{a: .a}", False),
        ("[.a]", False),
        (".a + 1", False),
        ("1", False),
        ("def f: .a; f", True),
        ("def f(p): p | .b; f(.a[])", True),
        ("def f(p): p | .b; f(1)", False),
        ("def f($p): .[$p]; f(1)", True),
        ("def f: .a | f; f", True),
        ("def f: .a; def f(x): x | 1; f(.)", False),
        ("reduce .a[] as $k (.; .[$k])", True),
        ("reduce .a[] as $k (null; .[$k])", False),
        ("foreach .a[] as $k (.; .[$k]; .x)", True),
        ("foreach .a[] as $k (.; .[$k]; [.])", False),
        ("last(.a[])", False),
        ("nth(1; .a[])", True),
        (".a[] | numbers", True),
        ("to_entries", False),
        ("try .a catch empty", True),
        ("try .a catch .b", False),
        (". as [$a] | .a", False),
        (". as [$a] ?// $a | .a", False),
        ("label $out | .a, break $out", True),
        ("$__loc__", False),
        ('error("x")', False),
    ],
)
def test_denotes_paths(src: str, assignable: bool) -> None:
    expr = compile_expression(src)
    assert expr.denotes_paths is assignable
    # Write safety is stricter only about `//`.
    assert expr.is_assignable is (assignable and "//" not in src)


@pytest.mark.parametrize(
    "src", [".a // .b", ".spec.image // .spec.defaultImage", "def f: .a // .b; f", ".a | (.b // .c)"]
)
def test_alternatives_denote_paths_but_are_not_write_paths(src: str) -> None:
    expr = compile_expression(src)
    assert expr.denotes_paths and not expr.is_assignable
    ref = [tuple(p) for p in jq.compile(f"[path({src})]").input_value({"a": None}).first()]
    assert expr.paths({"a": None}) == ref


def test_getpath_setpath_helpers() -> None:
    data = {"a": [1, {"b": 2}]}
    assert getpath(data, ["a", 1, "b"]) == 2
    assert getpath(data, ["x", "y"]) is None
    out = setpath(data, ["a", 1, "c"], 3)
    assert out == {"a": [1, {"b": 2, "c": 3}]}
    assert data == {"a": [1, {"b": 2}]}
    assert setpath(None, ["a", 0], 1) == {"a": [1]}
    assert setpath({"a": [1, 2]}, ["a", -1], 9) == {"a": [1, 9]}


# Multi-step reduce/foreach: the accumulator's path is threaded through every update (gojq's
# answer). libjq 1.8 loses the path after the first update and fails ("Invalid path expression
# near attempt to access element ..."), so these are checked against fixed answers.
@pytest.mark.parametrize(
    ("src", "data", "expected"),
    [
        ('reduce ("a", "b") as $k (.; .[$k])', {"a": {"b": 1}}, [("a", "b")]),
        ('foreach ("a", "b") as $k (.; .[$k])', {"a": {"b": 1}}, [("a",), ("a", "b")]),
        ('foreach ("a", "b") as $k (.; .[$k]; .c)', {}, [("a", "c"), ("a", "b", "c")]),
        (".x as $ks | reduce $ks[] as $k (.; .[$k])", {"x": ["spec", "n"]}, [("spec", "n")]),
        ("def dig(ks): reduce ks as $k (.; .[$k]); dig(.p[])", {"p": ["a", 0]}, [("a", 0)]),
    ],
)
def test_multi_step_reduce_and_foreach_paths(src: str, data: Any, expected: list[tuple[Any, ...]]) -> None:
    expr = compile_expression(src)
    assert expr.is_assignable
    assert expr.paths(data) == expected
    with pytest.raises(ValueError, match="Invalid path expression"):
        jq.compile(f"[path({src})]").input_value(data).all()


def test_recursive_function_in_path_mode_is_bounded() -> None:
    expr = compile_expression("def f: .a, (.b | select(. != null) | f); f")
    assert expr.is_assignable
    deep: Any = {"a": 0}
    for _ in range(5):
        deep = {"a": 1, "b": deep}
    assert expr.paths(deep)[-1] == ("b",) * 5 + ("a",)
    with pytest.raises(ExpressionLimitError):
        compile_expression("def f: ., f; f").paths({})
    with pytest.raises(ExpressionLimitError):
        compile_expression("def f: f | .a; f").paths({})


def test_path_inside_function_over_closure_argument() -> None:
    expr = compile_expression("def ps(f): [path(f)]; ps(.a, .b[0]), ps(first(.c[]?))")
    assert expr.all({"c": [1]}) == [[["a"], ["b", 0]], [["c", 0]]]
    assert expr.all({"c": [1]}) == jq.compile(expr.source).input_value({"c": [1]}).all()


def _corpus() -> list[str]:
    from .test_conformance import CASES

    return sorted(set(CASES) | set(PATH_EXPRS))


# Corpus expressions where libjq's path() succeeds on some sample object but is_assignable says
# no. Either the answer depends on the data (`// 1` is a path only while the left side is truthy;
# `if false then 1 end` takes the `.` branch), or libjq accepts a value because it is *identical*
# to the one at the current path (destructuring, `$x`, jq-defined builtins such as `indices`,
# `ltrimstr`, `index` that slice or index the input), which is an artefact, not a path rule.
NOT_ASSIGNABLE_BUT_LIBJQ_PATH_OK = {
    "abs",
    '.a // error("missing a")',  # libjq: the path of .a, or the error; we do not assign through error()
    ". as $x | $x",
    ". as {$a} | $a",
    ". as {a: $x} | $x",
    '.metadata.annotations["autoscaling.knative.dev/max-scale"] | tonumber?',
    '.s | index("o"), rindex("o")',
    '.s | indices("o")',
    '.s | ltrimstr("Hello"), rtrimstr("World")',
    ".spec.pytorchReplicaSpecs.Master.replicas // 1",
    ".spec.replicas // 1",
    '.spec.template.cliques[]? as $c | select(($c.name // "") != "") | $c.name',
    ".spec.workerGroupSpecs[]? | .replicas // 1",
    ".spec.workerGroupSpecs[]?.replicas // 1",
    'getpath(["a"]) // 5',
    "if .x then 1 elif .y then 2 end",
    "if false then 1 end",
    "last(empty)",
    "path(.a | select(. == null))",
    "try error catch .",
}


def test_is_assignable_is_consistent_with_path_mode() -> None:
    """is_assignable => paths() never fails with "Invalid path expression" on the samples;
    and the corpus expressions libjq can take paths of but we call unassignable are listed."""
    unlisted = []
    for src in _corpus():
        try:
            expr = compile_expression(src)
        except ExpressionError:
            continue
        libjq_ok = False
        for data in INPUTS:
            try:
                jq.compile(f"[path({src})]").input_value(data).all()
                # libjq compares values by identity, and all nulls are identical: on null or
                # scalar inputs it accepts e.g. `. as $x | $x`; count realistic objects only.
                libjq_ok = libjq_ok or (type(data) is dict and bool(data))
            except ValueError:
                pass
            if expr.denotes_paths:
                try:
                    expr.paths(data)
                except PathError as exc:
                    raise AssertionError(f"{src!r} denotes_paths but paths() failed: {exc.message}") from exc
                except ExpressionError:
                    pass  # data errors (Cannot index ...) are not path errors
        if libjq_ok and not expr.denotes_paths:
            unlisted.append(src)
    assert set(unlisted) == NOT_ASSIGNABLE_BUT_LIBJQ_PATH_OK, sorted(unlisted)
