"""Hostile expressions and inputs end in typed errors (no hangs, no raw Python exceptions).
No wall-clock assertions: each case only has to raise the right error type."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from workload_map.errors import ExpressionLimitError, ExpressionRuntimeError, ExpressionSafetyError
from workload_map.expr import MAX_RESULTS, compile_expression

BIG = list(range(300))


@pytest.mark.parametrize(
    ("src", "data"),
    [
        ("def f: f; f", None),
        ("def f: [f]; f", None),
        ("def f: 1 + f; f", 1),
        ("def f(g): f(g); f(.)", None),
        ("reduce (.[]?) as $x ([1]; . + .)", BIG),
        ("[limit(100000; until(false; .))]", None),
        ("until(false; . + 1)", 0),
        ('"x" * 100000000', None),
        ('"x" * 1e9', None),
        ("[.[] as $a | .[] as $b | .[] as $c | 1] | length", BIG),
        ("reduce (.[] as $a | .[] as $b | .[]) as $x (0; . + 1)", BIG),
        ("reduce .[] as $x ([1]; [.[], .[]]) | length", BIG),
        (".[] , .[] , .[] , .[]", BIG),
        ('reduce .[] as $x ("ab"; . + .)', BIG),
        ("label $l | def f: ., f; f", 1),
    ],
)
def test_hostile_expression_hits_a_limit(src: str, data: Any) -> None:
    try:
        expr = compile_expression(src)
    except ExpressionSafetyError:
        return  # rejected statically is also fine (e.g. nested quantifiers)
    with pytest.raises(ExpressionLimitError):
        expr.all(data)


@pytest.mark.parametrize(
    ("src", "data", "expected"),
    [
        ('test("(a+)+$")', "a" * 40 + "b", False),
        ('test("^(a|a)*$")', "a" * 32 + "!", False),
        ('test("a*a*a*a*a*$")', "a" * 5000 + "b", True),
        ('test("(x+x+)+y")', "x" * 100_000, False),
        ('test("a*")', "a" * 200_000, True),
    ],
)
def test_backtracking_patterns_run_in_linear_time(src: str, data: str, expected: bool) -> None:
    # RE2: the classic catastrophic shapes are answered, not refused; the cost model bounds them.
    assert compile_expression(src).all(data) == [expected]


def test_result_cap_message() -> None:
    with pytest.raises(ExpressionLimitError) as info:
        compile_expression(".[]").all(list(range(MAX_RESULTS + 1)))
    assert info.value.message == "query results exceed the allowed number 1000"
    assert len(compile_expression(".[]").all(list(range(MAX_RESULTS)))) == MAX_RESULTS


def test_first_does_not_compute_the_rest() -> None:
    assert compile_expression('.[] , error("never")').first([1, 2]) == 1
    assert compile_expression("empty").first(None) is None


def _deep(n: int) -> Any:
    v: Any = []
    for _ in range(n):
        v = [v]
    return v


@pytest.mark.parametrize(
    "src",
    [
        "tojson",
        "tostring",
        ". == .",
        "[.] | sort",
        ". < [1]",
        "contains([])",
        "flatten",
        "@json",
        ". as $x | [$x] == [$x]",
        "unique",
        "{a: .} | tojson",
    ],
)
def test_deeply_nested_input_is_bounded(src: str) -> None:
    data = _deep(100_000)
    with contextlib.suppress(ExpressionLimitError):
        compile_expression(src).all(data)


def test_raw_python_errors_never_escape() -> None:
    for src in [
        "implode",
        "@base64d",
        "fromjson",
        "ascii",
        'strftime("%Y")',
        "mktime",
        "tonumber",
        '.["a"]',
        "splits(1)",
    ]:
        data: Any
        for data in [None, 1, "x", [1.5, "a"], {"a": []}, [[1]], "\udcff"]:
            with contextlib.suppress(ExpressionRuntimeError):
                compile_expression(src).all(data)


def test_try_cannot_swallow_limits() -> None:
    with pytest.raises(ExpressionLimitError):
        compile_expression('try ("x" * 100000000) catch "caught"').all(None)
    with pytest.raises(ExpressionLimitError):
        compile_expression("[.[] | (def f: f; f)?]").all([1])


def test_error_values_are_truncated_in_messages() -> None:
    with pytest.raises(ExpressionRuntimeError) as info:
        compile_expression(".[]").all("y" * 10_000)
    assert len(info.value.message) < 80
