"""Grammar fuzz of the compiler and evaluator (issue #10): random jq programs on random values.

Asserted for every generated program: compiling raises nothing but ExpressionError (syntax or
safety), evaluating raises nothing but ExpressionError (jq errors and limit errors), and the cost
model bounds what an evaluation allocates: with a small budget and the wall-clock deadline lifted,
no evaluation's peak allocation (tracemalloc) exceeds a bound proportional to that budget.
Programs are built from the constructs hostile definitions combine: recursion, reduce/foreach,
doubling constructors, string growth, path builtins, regexes, arithmetic on huge numbers.

A second fuzz (issue 23) draws any entry of the builtin registry and values for its input and
arguments from the megabyte adversarial pools (``adversarial.py``) or at random: only typed errors,
and no more memory than the units charged pay for.
"""

from __future__ import annotations

import contextlib
import resource
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.errors import ExpressionError
from workload_map.expr import compile_expression, set_limits
from workload_map.expr import registry as reg
from workload_map.expr import runtime as R

from .adversarial import FILTERS, Case, pools
from .adversarial import case_of as make_case

BUDGET = 20_000
#: Peak bytes one evaluation may allocate under BUDGET (generous: it is a bound, not a measurement).
MEMORY_BOUND = 8 << 20
#: Extra address space the process may take during these tests (threads and allocator arenas included).
ADDRESS_SPACE_HEADROOM = 2 << 30

ATOMS = st.sampled_from(
    [
        ".",
        ".a",
        ".[]?",
        ".[0]?",
        "..",
        "1",
        "0",
        "-1",
        "1e308",
        "9007199254740993",
        '"a"',
        '"ab\\n"',
        "null",
        "true",
        "[]",
        "{}",
        "$x",
        "input_line_number?",
        "empty",
        "error",
        "keys?",
        "length",
        "tostring",
        "tojson",
        "tostream",
        "explode",
        "ascii",
        "@base64",
        "@csv?",
        "@html",
        "flatten?",
        "add",
        "paths",
        "[paths]",
        "to_entries?",
        "reverse",
        "sort?",
        "unique?",
        "env",
        "$__loc__",
        'splits("a")?',
        'test("(a|a)*$")?',
        'gsub("a"; "aa")?',
        'ltrimstr("a")',
        "tonumber?",
        "infinite",
        "nan",
        "not",
        "type",
    ]
)


def _compose(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    two = st.tuples(children, children)
    return st.one_of(
        two.map(lambda p: f"({p[0]} | {p[1]})"),
        two.map(lambda p: f"({p[0]}, {p[1]})"),
        two.map(lambda p: f"({p[0]} + {p[1]})"),
        two.map(lambda p: f"({p[0]} * {p[1]})"),
        two.map(lambda p: f"({p[0]} // {p[1]})"),
        two.map(lambda p: f"({p[0]} == {p[1]})"),
        two.map(lambda p: f"({p[0]} < {p[1]})"),
        two.map(lambda p: f"[{p[0]}, {p[1]}]"),
        two.map(lambda p: f'{{a: {p[0]}, "b": {p[1]}}}'),
        two.map(lambda p: f"(if {p[0]} then {p[1]} else . end)"),
        two.map(lambda p: f"(try {p[0]} catch {p[1]})"),
        two.map(lambda p: f"reduce ({p[0]}) as $x (.; {p[1]})"),
        two.map(lambda p: f"foreach ({p[0]}) as $x (.; {p[1]}; .)"),
        two.map(lambda p: f"({p[0]} as $x | {p[1]})"),
        two.map(lambda p: f'"\\({p[0]})-\\({p[1]})"'),
        children.map(lambda c: f"[{c}]"),
        children.map(lambda c: f"({c})?"),
        children.map(lambda c: f"[.[]? | {c}]"),
        children.map(lambda c: f"map({c})?"),
        children.map(lambda c: f"select({c})"),
        children.map(lambda c: f"[limit(5; {c})]"),
        children.map(lambda c: f"first({c})"),
        children.map(lambda c: f"[recurse({c})?]"),
        children.map(lambda c: f"until(. == null; {c})?"),
        children.map(lambda c: f"[repeat({c})?]"),
        children.map(lambda c: f"path({c})?"),
        children.map(lambda c: f"with_entries({c})?"),
        children.map(lambda c: f"def g(n): if n > 0 then g(n-1), g(n-1) else {c} end; [g(12)]"),
        children.map(lambda c: f"def f: {c} | f; [limit(50; f)]"),
        children.map(lambda c: f"reduce (1,2,3,4,5,6,7,8,9,10) as $i ({c}; [., .])"),
        children.map(lambda c: f"reduce (1,2,3,4,5,6,7,8,9,10) as $i ({c}; . * .)?"),
    )


PROGRAMS = st.recursive(ATOMS, _compose, max_leaves=8)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.text(max_size=12)
)
VALUES = st.recursive(
    SCALARS,
    lambda c: st.one_of(
        st.lists(c, max_size=5), st.dictionaries(st.sampled_from(["a", "b", "c"]), c, max_size=3)
    ),
    max_leaves=25,
)


@pytest.fixture(autouse=True, scope="module")
def small_budget_no_deadline() -> Iterator[None]:
    set_limits(budget=BUDGET, deadline=3600.0)
    yield
    set_limits(budget=R.COST_BUDGET, deadline=R.DEFAULT_DEADLINE)


def _address_space() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * resource.getpagesize()


@pytest.fixture(autouse=True, scope="module")
def memory_ceiling() -> Iterator[None]:
    """A program that escaped the cost model must fail this test (MemoryError, reported with the
    program), not get the whole test run killed by the kernel: the address space may grow by at most
    ADDRESS_SPACE_HEADROOM while these tests run."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    ceiling = _address_space() + ADDRESS_SPACE_HEADROOM
    if hard != resource.RLIM_INFINITY:
        ceiling = min(ceiling, hard)
    resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    yield
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROGRAMS, VALUES)
def test_random_programs_raise_only_typed_errors_within_bounded_memory(source: str, data: Any) -> None:
    program = f"(. as $x | {source})"
    try:
        expr = compile_expression(program)
    except ExpressionError:
        return
    tracemalloc.start()
    try:
        with contextlib.suppress(ExpressionError):
            expr.all(data)
        with contextlib.suppress(ExpressionError):
            expr.first(data)
        _, peak = tracemalloc.get_traced_memory()
    except MemoryError:
        raise AssertionError(f"{program} on {data!r}: escaped the cost model (MemoryError)") from None
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_BOUND, f"{program}: {peak} bytes"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list('.[]{}()|,;:$"\\@?+-*/%=<>!a1 \n')), max_size=60))
def test_random_text_only_raises_typed_errors(source: str) -> None:
    try:
        expr = compile_expression(source)
    except ExpressionError:
        return
    with contextlib.suppress(ExpressionError):
        expr.all({"a": [1, "x", {"b": None}]})


# --- registry-driven: any builtin, on values from every argument kind's adversarial pool ----------

_ENTRIES = sorted(reg.REGISTRY.values(), key=lambda e: e.label)
#: Bytes one unit may stand for at most, and what any evaluation allocates (as the registry walk).
_BYTES_PER_UNIT = 160
_SLACK = 2 << 20


def _value_of(kind: str) -> st.SearchStrategy[Any]:
    """A value for an argument kind: from the megabyte adversarial pool or small and random."""
    if kind in FILTERS:
        return st.sampled_from(FILTERS[kind])
    return st.one_of(st.sampled_from(pools()[kind]), VALUES)


@st.composite
def _builtin_calls(draw: st.DrawFn) -> tuple[reg.Builtin, Case]:
    entry = draw(st.sampled_from(_ENTRIES))
    picks = [draw(_value_of(kind)) for kind in (entry.input, *entry.args)]
    return entry, make_case(entry, picks)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_builtin_calls())
def test_random_builtin_calls_on_adversarial_values_are_bounded(call: tuple[reg.Builtin, Case]) -> None:
    entry, case = call
    try:
        expr = compile_expression(case.source, case.variables)
    except ExpressionError:
        return
    meter = R.start()
    tracemalloc.start()
    try:
        try:
            expr._program.all_fn(None, case.variables, meter)
        except Exception as exc:  # the API's mapping: only its typed errors may come out
            error = expr._fail(exc)
            assert "internal error" not in error.message, f"{entry.label}: {case!r}: {error.message}"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    paid = min(R.used(meter), BUDGET + R.CHUNK)
    assert peak <= _SLACK + _BYTES_PER_UNIT * paid, f"{entry.label}: {case!r}: {peak} bytes, {paid} units"
