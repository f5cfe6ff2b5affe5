"""Issue 23's builtin attacks, reconstructed from its text: every builtin pays for its work.

Regex builtins on megabyte strings with many or empty matches and many groups (7 to 120 s and
up to 3.3 GB before), several regex calls in one expression (20 s before the 0.25 s deadline was
reported), string ``indices``/``index``/``rindex`` with long overlapping needles (quadratic work
charged linearly). Deterministic assertions only: the wall-clock deadline is lifted (so what
stops an attack is the cost budget, counted in units) and tracemalloc measures the peak; the
times are in ``bench/bench_hostile_expr.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from workload_map.errors import ExpressionError, ExpressionLimitError
from workload_map.expr import compile_expression, set_limits
from workload_map.expr import runtime as R

from .metering import evaluate

MB = 1_000_000
MEMORY_BOUND = 64 << 20
# A quarter of the default budget for the megabyte attacks: what stops them is the same, sooner.
ATTACK_BUDGET = 250_000


@pytest.fixture(autouse=True)
def budget_only() -> Iterator[None]:
    set_limits(deadline=3600.0)
    yield
    set_limits(deadline=R.DEFAULT_DEADLINE, budget=R.COST_BUDGET)


ONE_MB_OF_A = "a" * MB

# (expression, subject): the regex class, one line per builtin and shape.
REGEX_ATTACKS = [
    ('[match(""; "g")] | length', ONE_MB_OF_A),  # empty matches
    ('[match("a"; "g")] | length', ONE_MB_OF_A),  # many matches
    ('[match("a"; "g")]', ONE_MB_OF_A),  # kept, not counted
    ('[match("' + "(a?)" * 64 + '"; "g")] | length', ONE_MB_OF_A),  # many groups
    ('[match("' + "(" * 40 + ".*" + ")" * 40 + '")] | length', ONE_MB_OF_A),  # 40 groups of 1 MB each
    ('[capture("(?<x>a)(?<y>a?)"; "g")] | length', ONE_MB_OF_A),
    ('[scan("")] | length', ONE_MB_OF_A),
    ('[scan("(a)(a)")] | length', ONE_MB_OF_A),
    ('[splits("")] | length', ONE_MB_OF_A),
    ('[splits("a")] | length', ONE_MB_OF_A),
    ('split("b"; null) | length', "ab" * (MB // 2)),
    ('gsub(""; "-") | length', ONE_MB_OF_A),
    ('gsub("a"; "bb") | length', ONE_MB_OF_A),
    ('gsub("' + "(a)" * 16 + '"; "x") | length', ONE_MB_OF_A),
    ('[sub("(?<x>a)"; "\\(.x)", "y"; "g")] | length', ONE_MB_OF_A),  # one result per replacement output
    ('[match("a*b|a"; "g")] | length', "a" * (MB // 10)),  # leftmost-first: each search reads to the end
    ('[.[] | test("(a|b)*a(a|b){30}c")] | length', ["ab" * (MB // 2)] * 40),  # RE2's slow path, 40 times
]


@pytest.mark.parametrize(("src", "data"), REGEX_ATTACKS, ids=[s for s, _ in REGEX_ATTACKS])
def test_regex_builtins_on_a_megabyte_end_in_a_budget_error_within_bounds(src: str, data: Any) -> None:
    set_limits(budget=ATTACK_BUDGET)
    out, _units, peak = evaluate(src, data)
    assert isinstance(out, ExpressionLimitError), out
    assert "cost budget" in out.message or "subject longer" in out.message, out.message
    assert peak < MEMORY_BOUND, f"peak {peak / 1e6:.1f} MB"


def test_ordinary_regex_work_still_answers() -> None:
    # A label-sized subject and an annotation-sized one: cheap, and the answers are jq's.
    assert compile_expression('gsub("-"; "_")').all("llama-workers-0-0") == ["llama_workers_0_0"]
    annotation = "key=value," * 2_000
    out, units, _ = evaluate('[scan("(\\\\w+)=(\\\\w+)")] | length', annotation)
    assert out == [2_000]
    assert units < R.COST_BUDGET // 4


def test_a_global_match_pays_for_every_search_reading_the_rest_of_the_subject() -> None:
    # a*b|a on a run of a's: every search reads to the end before settling for one "a" (the
    # work is quadratic in the subject); so is the charge: doubling the subject quadruples it.
    counts = []
    for n in (400, 800):
        out, units, _ = evaluate('[match("a*b|a"; "g")] | length', "a" * n)
        assert out == [n]
        counts.append(units)
    assert counts[1] >= 3.5 * counts[0], counts


def test_a_search_that_cannot_be_afforded_is_refused_before_it_runs() -> None:
    # (a|b)*a(a|b){60}c: a program of hundreds of instructions, each of which may read every byte
    # of a megabyte subject; its worst case is over the whole budget, so it never starts.
    out, units, _ = evaluate('test("(a|b)*a(a|b){60}c")', "ab" * (MB // 2))
    assert isinstance(out, ExpressionLimitError) and "cost budget" in out.message
    assert units < R.COST_BUDGET // 10  # what was charged: reading the subject and the pattern


def test_several_regex_calls_stop_at_the_deadline_inside_the_first() -> None:
    # The deadline is checked before every search, not only between builtins: with a budget that
    # never runs out and a deadline already past, the first call stops after a chunk of work.
    set_limits(budget=10**12, deadline=1e-9)
    src = '[(gsub(""; "-") | length), ([scan("a")] | length), ([splits("a")] | length)]'
    out, units, _ = evaluate(src, ONE_MB_OF_A)
    assert isinstance(out, ExpressionLimitError) and "time limit" in out.message
    assert units < 200_000


@pytest.mark.parametrize("builtin", ["indices", "index", "rindex"])
def test_long_overlapping_needles_end_in_a_budget_error_or_one_linear_search(builtin: str) -> None:
    subject, needle = "a" * MB, "a" * (MB // 2)
    out, units, peak = evaluate(f".[0] as $n | .[1] | {builtin}($n)", [needle, subject])
    assert peak < MEMORY_BOUND
    if builtin == "indices":  # half a million occurrences, each confirmed by half a million compares
        assert isinstance(out, ExpressionLimitError) and "cost budget" in out.message, out
    else:  # index and rindex stop at the first (last) occurrence: one linear search
        assert out == [0 if builtin == "index" else MB // 2]
        assert units < 100_000


def test_indices_charges_each_occurrence_the_comparison_that_confirmed_it() -> None:
    n, m = 4_000, 2_000
    out, units, _ = evaluate(".[0] as $n | .[1] | indices($n) | length", ["a" * m, "a" * n])
    occurrences = n - m + 1
    assert out == [occurrences]
    assert units >= occurrences * (m // R.STRING_UNIT)  # n*m work, charged as such
    out, units, _ = evaluate(".[0] as $n | .[1] | indices($n) | length", ["a" * 20, "a" * n])
    assert out == [n - 19]
    assert units < 2 * n  # a short needle: linear


@pytest.mark.parametrize(
    "src",
    [
        "reduce .[] as $x (.; .[1:]) | length",  # a slice copies: charged by its length
        "reduce .[] as $x (.; setpath([0]; $x)) | length",  # setpath copies the array each time
        "[.[] as $x | $big | min] | length",  # min reads every element each time
        "[.[] as $x | $big | reverse | length] | length",
        "[.[] as $x | $big | keys_unsorted | length] | length",
        "[.[] as $x | $big | any] | length",
        '[.[] as $x | $text | ltrimstr("a") | length] | length',
        "[.[] as $x | $text | startswith($text)] | length",
        "[.[] as $x | $text | trim | length] | length",
        '[.[] as $x | $text | contains("b")] | length',
        '[.[] as $x | $text == ($text | .[1:] | "a" + .)] | length',
        '[.[] as $x | "\\($text)\\($text)" | length] | length',  # interpolation builds 2 MB each time
        "[.[] as $x | builtins | length] | length",  # a fresh list of ~180 names each time
        "[.[] as $x | $text | @sh | length] | length",
        "[.[] as $x | $text | @base64 | length] | length",
    ],
)
def test_per_call_linear_work_in_a_loop_is_charged_each_time(src: str) -> None:
    # One loop step each, but every step reads or copies a large value: uncharged, these ran
    # for seconds (quadratic); charged, they end in the budget.
    expr = compile_expression(src, ["big", "text"])
    big = list(range(100_000))
    text = "a" * MB
    with pytest.raises(ExpressionLimitError, match="cost budget"):
        expr.all(list(range(20_000)), {"big": big, "text": text})


def test_an_error_carrying_a_huge_value_gives_a_bounded_message() -> None:
    # The value stands for 2**30 leaves: the message shows its start, and no Python error leaks.
    count = ",".join(str(i) for i in range(1, 31))
    doubling = f'reduce ({count}) as $i ("a"; [., .])'
    with pytest.raises(ExpressionError) as info:
        compile_expression(f"error({doubling})").all(None)
    assert info.value.message.startswith('[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["a","a"],["a","a"]]')
    assert len(info.value.message) < 5_000


def test_comparing_with_a_huge_object_pays_for_sorting_its_keys() -> None:
    # Found by test_fuzz: `{} > $x` sorted the keys of a 200,000-key $x under a 1-unit charge
    # (only the left side was measured).
    huge = {str(i): i for i in range(200_000)}
    for src in (". as $x | {} > $x", ". as $x | [] < $x", '. as $x | "" >= $x'):
        out, units, peak = evaluate(src, huge)
        assert isinstance(out, list), out
        assert units >= 200_000, (src, units)
        assert peak <= (2 << 20) + 160 * units, (src, peak, units)
