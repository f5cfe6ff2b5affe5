"""The cost model bounds work and memory before they happen (issue: hostile definitions).

Each case is a class of attack seen on real processes. The wall-clock deadline is lifted for
these tests, so what stops each one is the budget (work counted in units, not seconds), and
tracemalloc measures what it allocated: no timing assertions."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest

from workload_map.errors import ExpressionError, ExpressionLimitError, ExpressionSyntaxError
from workload_map.expr import compile_expression, set_limits
from workload_map.expr import runtime as R

from .metering import evaluate

MEMORY_BOUND = 64 << 20  # bytes any single hostile evaluation may allocate at its peak


def _count(n: int) -> str:
    return ",".join(str(i) for i in range(1, n + 1))


DOUBLING = f'reduce ({_count(32)}) as $i ("a"; [.,.])'
SQUARING = f"reduce ({_count(30)}) as $i (3; .*.)"


@pytest.fixture(autouse=True)
def budget_only() -> Iterator[None]:
    set_limits(deadline=3600.0)
    yield
    set_limits(deadline=R.DEFAULT_DEADLINE, budget=R.COST_BUDGET)


@pytest.mark.parametrize(
    "src",
    [
        f"{DOUBLING} | tojson | length",
        f"{DOUBLING} | tostring | length",
        f'{DOUBLING} | "\\(.)" | length',
        f"{DOUBLING} | flatten | length",
        f"{DOUBLING} | . == .",
        f"{DOUBLING} | . < .",
        f"{DOUBLING} | [tostream] | length",
        f"{DOUBLING} | @csv",
        f"{DOUBLING} | @html",
        f"{DOUBLING} | @json | length",
        f"{DOUBLING} | contains(.)",
        f"{DOUBLING} | [., .] | unique | length",
        f"{DOUBLING} | indices(.[0])",
        f"{DOUBLING} | tojson | explode | length",
        f"{DOUBLING}",  # the result itself, before any caller serializes it
        f'reduce ({_count(24)}) as $i ("ab"; . + .) | length',
        f"reduce ({_count(24)}) as $i ({{}}; {{a: ., b: .}}) | tojson",
        "def g(n): if n > 0 then g(n-1), g(n-1) else . end; [g(40)]",
        "def f: f; f",
        "[limit(100000000; until(false; .))]",
        '[.[] as $a | .[] as $b | .[] as $c | "x"] | add | length',
        # Found by the fuzz test: a loop whose body builds many containers per step (an unrolled
        # reduce) reached 945 MB; loops are charged for the containers their body builds.
        f"until(. == null; [limit(5; first(reduce ({_count(10)}) as $i (.; [., .])))])?",
        f"until(. == null; reduce ({_count(40)}) as $i (.; {{a: ., b: [.]}}))",
        f"def h(n): if n > 0 then (h(n-1), h(n-1)) else reduce ({_count(30)}) as $i (.; [.]) end; [h(20)]",
    ],
)
def test_hostile_evaluation_ends_in_a_limit_error_within_bounds(src: str) -> None:
    out, _units, peak = evaluate(src, list(range(200)))
    assert isinstance(out, ExpressionLimitError), out
    assert "time limit" not in out.message  # the budget stopped it, not the clock
    assert peak < MEMORY_BOUND, f"peak {peak / 1e6:.1f} MB"


def test_big_integers_become_doubles_like_jq() -> None:
    # libjq computes in doubles: squaring 3 thirty times is infinity, not a 10^8-digit integer.
    out, _units, peak = evaluate(f"{SQUARING} | 1", None)
    assert out == [1]
    assert peak < MEMORY_BOUND
    assert compile_expression(SQUARING).all(None) == [math.inf]
    assert compile_expression(f"{SQUARING} | tojson").all(None) == ["1.7976931348623157e+308"]
    assert compile_expression("9007199254740992 + 1").all(None) == [9007199254740992.0]
    assert compile_expression("4503599627370496 * 2").all(None) == [9007199254740992]
    assert compile_expression("tojson").all(10**400) == ["1.7976931348623157e+308"]


@pytest.mark.parametrize(
    ("src", "data", "message"),
    [
        ("1114112 | ascii", None, "number (1114112) is not a valid codepoint"),
        ('"a" * infinite', None, "string length exceeds the allowed 10000000 characters"),
        ("tonumber", "9" * 100_000, "cannot be parsed as a number"),
        ("tostring", "huge", None),
    ],
    ids=["ascii", "repeat-infinite", "tonumber-long", "tostring-huge-int"],
)
def test_edge_values_give_messages_not_internal_errors(src: str, data: Any, message: str | None) -> None:
    if data == "huge":
        data = 10**100_000
    try:
        out: Any = compile_expression(src).all(data)
    except ExpressionError as exc:
        assert "internal error" not in exc.message
        if message is not None:
            assert message in exc.message
        return
    assert message is None, out


def test_budget_is_per_evaluation_and_configurable() -> None:
    expr = compile_expression('[.[] | tostring] | join(",") | length')
    data = list(range(20_000))
    assert expr.all(data) == [len(",".join(map(str, data)))]
    assert expr.all(data) == expr.all(data)  # a fresh budget each time
    set_limits(budget=1_000)
    with pytest.raises(ExpressionLimitError, match="cost budget of 1000 units"):
        expr.all(data)


def test_deadline_is_the_second_guard() -> None:
    set_limits(deadline=1e-9, budget=10**9)
    with pytest.raises(ExpressionLimitError, match="time limit"):
        compile_expression("[limit(100000000; until(false; .))]").all(None)


def test_limits_refuse_nonsense() -> None:
    with pytest.raises(ValueError):
        set_limits(budget=0)
    with pytest.raises(ValueError):
        set_limits(deadline=0)


def test_ordinary_catalog_sized_work_fits_easily() -> None:
    pod = {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "4"}}} for _ in range(10)]}
    job = {
        "spec": {"replicatedJobs": [{"name": f"w{i}", "replicas": 2, "template": pod} for i in range(200)]}
    }
    expr = compile_expression(
        "[.spec.replicatedJobs[] | .replicas * ([.template.containers[].resources.limits"
        '["nvidia.com/gpu"] | tonumber] | add)] | add'
    )
    assert expr.all(job) == [200 * 2 * 40]
    meter = R.start()
    assert expr.all(job, meter=meter) == [200 * 2 * 40]
    assert 0 < R.used(meter) < R.COST_BUDGET // 20


@pytest.mark.parametrize(
    ("src", "fragment"),
    [
        ("+".join(["1"] * 1000), "nested too deeply"),
        (".a" * 1000, "nested too deeply"),
        ("[" + ",".join(["1"] * 20_000) + "]", "nested too deeply"),
        ("1" * 200_000, "characters long"),
        ("(" * 5000 + "1" + ")" * 5000, "nested too deeply"),
    ],
)
def test_parser_limits_give_syntax_errors(src: str, fragment: str) -> None:
    with pytest.raises(ExpressionSyntaxError) as info:
        compile_expression(src)
    assert fragment in info.value.message


@pytest.mark.parametrize(
    "src",
    [
        "+".join(["1"] * 190),
        ".a" * 190,
        ".a" + "|.a" * 150,
        "[" + ",".join(["1"] * 180) + "]",
        "-" * 190 + "1",
    ],
)
def test_deep_but_accepted_trees_compile(src: str) -> None:
    # Every tree the parser accepts compiles (deep ones on a large helper stack).
    compile_expression(src).all({"a": {"a": None}})


def test_nested_definitions_cannot_blow_up_generated_code() -> None:
    src = "def f: " * 30 + "1" + ";f" * 30
    with pytest.raises(ExpressionError, match="too complex to compile"):
        compile_expression(src)
