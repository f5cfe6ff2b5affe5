"""The builtin registry: one entry per builtin with a cost rule that its implementation keeps.

The registry-driven walk runs every entry (builtins, forms, formats, operators) on adversarial
inputs at the megabyte scale (``adversarial.py``) and checks what the cost model promises,
deterministically: each run ends in an answer, a jq error or a cost-budget error (the wall-clock
deadline is lifted, so the budget is what stops it), never a Python error; and everything it
allocated was paid for before it was allocated (tracemalloc's peak stays within a few bytes per
unit charged). Times are the benchmark's job (``bench/bench_hostile_expr.py --registry``).
"""

from __future__ import annotations

import inspect
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

from workload_map.errors import ExpressionError, ExpressionLimitError, ExpressionRuntimeError
from workload_map.expr import compile_expression, set_limits
from workload_map.expr import registry as reg
from workload_map.expr import runtime as R
from workload_map.expr.names import BUILTINS, FORMATS

from .adversarial import cases, kinds_without_pool, pools

#: The budget per adversarial run: a tenth of the default, so the walk stays quick; a megabyte
#: input still costs tens of thousands of units to read.
BUDGET = 100_000
#: Bytes one unit may stand for at most (text: 32 characters of up to 4 bytes; a container: a
#: few pointers) and what an evaluation allocates whatever it does (frames, small objects).
BYTES_PER_UNIT = 160
SLACK = 2 << 20


@pytest.fixture(scope="module", autouse=True)
def small_budget_no_deadline() -> Iterator[None]:
    set_limits(budget=BUDGET, deadline=3600.0)
    pools()  # built before any measurement
    yield
    set_limits(budget=R.COST_BUDGET, deadline=R.DEFAULT_DEADLINE)


def test_every_callable_builtin_and_format_comes_from_the_registry() -> None:
    assert {k for k, e in reg.REGISTRY.items() if e.kind in ("value", "form")} == BUILTINS
    assert {e.name[1:] for e in reg.REGISTRY.values() if e.kind == "format"} == FORMATS
    # jq's `builtins` lists exactly the callable entries
    listed = compile_expression("builtins").all(None)[0]
    assert sorted(listed) == sorted(f"{n}/{a}" for n, a in BUILTINS)


def test_every_entry_states_a_cost_rule_its_implementation_keeps() -> None:
    assert reg.problems() == []
    for entry in reg.REGISTRY.values():
        assert entry.cost.rule.strip(), entry.label
        if entry.kind == "value":
            assert entry.python is not None, entry.label


def test_a_builtin_without_a_cost_rule_fails() -> None:
    # A rule must say something...
    with pytest.raises(ValueError, match="cost rule"):
        reg.Cost("", True)

    # ...and an implementation must agree with it: a builtin that does work proportional to its
    # input but is declared constant (so it never sees the meter) is reported, and so is one
    # declared metered whose implementation cannot charge.
    def reverse_everything(v: Any) -> Any:
        return v[::-1]

    def takes_meter(meter: R.Meter, v: Any) -> Any:
        return v

    wrong = [
        reg.Builtin("reverse_everything", 0, "value", reg.CONSTANT, python=takes_meter),
        reg.Builtin(
            "reverse_everything",
            1,
            "value",
            reg.metered("1 per element"),
            args=("any",),
            python=reverse_everything,
        ),
        reg.Builtin("reverse_everything", 2, "form", reg.metered("1 per element"), args=("filter", "filter")),
        reg.Builtin("reverse_everything", 3, "value", reg.CONSTANT, args=("any",)),
    ]
    try:
        for w in wrong:
            reg.REGISTRY[w.key] = w
        found = reg.problems()
    finally:
        for w in wrong:
            del reg.REGISTRY[w.key]
    assert any("reverse_everything/0" in p and "takes the meter" in p for p in found), found
    assert any("reverse_everything/1" in p and "takes no meter" in p for p in found), found
    assert any("reverse_everything/2" in p and "generated" in p for p in found), found
    assert any("reverse_everything/3" in p and "argument kinds" in p for p in found), found


def test_every_argument_kind_has_adversarial_values() -> None:
    assert kinds_without_pool() == set()


def test_metered_implementations_take_the_meter_first() -> None:
    for entry in reg.REGISTRY.values():
        if entry.python is None:
            continue
        first = next(iter(inspect.signature(entry.python).parameters))
        assert (first == "meter") == bool(entry.cost.metered), entry.label


def test_back_ends_attach_translations_per_builtin() -> None:
    backend = "test-backend"
    before = reg.untranslated(backend)
    assert "length/0" in before and "gsub/3" in before
    reg.attach(backend, "length", 0, "#")
    try:
        assert reg.translation(backend, "length", 0) == "#"
        assert "length/0" not in reg.untranslated(backend)
        with pytest.raises(ValueError, match="already has"):
            reg.attach(backend, "length", 0, "#")
        with pytest.raises(KeyError, match="not a builtin"):
            reg.attach(backend, "no_such_builtin", 0, "x")
    finally:
        del reg.REGISTRY[("length", 0)].translations[backend]


def test_the_type_tests_are_named_once_in_the_registry() -> None:
    """Both back ends generate a condition for exactly the registry's type tests, and the read
    paths flow through the same ones (expr.readpaths), with the outputs they had when each place
    listed the names itself."""
    from workload_map.expr import compiler, readpaths
    from workload_map.expr.lua import builtins as lua

    names = {*reg.TYPE_TESTS, *reg.NUMBER_TESTS}
    assert (
        len(names) == 11 and {n for (n, _), e in reg.REGISTRY.items() if "type test" in e.cost.rule} == names
    )
    assert set(compiler.TYPE_FILTERS) == names == set(lua.TYPE_FILTERS)
    assert {name for (name, _), form in lua.LUA_BUILTINS.items() if form.lua == "type_filter"} == names
    assert {
        "values", "nulls", "booleans", "numbers", "strings", "arrays", "objects", "iterables", "scalars",
        "debug", "stderr",
    } == readpaths._PASS_THROUGH  # fmt: skip


def _run(source: str, variables: dict[str, Any]) -> tuple[Any, int, int]:
    """(outputs or the ExpressionError, units charged, peak bytes allocated) of the evaluation
    itself: the generated code is called directly, without the API's final measure of the
    results (which would pay, after the fact, for what an uncharged builtin built)."""
    expr = compile_expression(source, variables)
    program = expr._program
    meter = R.start()
    tracemalloc.start()
    try:
        try:
            out: Any = program.all_fn(None, variables, meter)
        except Exception as exc:  # what the API turns into ExpressionError subclasses
            out = expr._fail(exc)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, R.used(meter), peak


@pytest.mark.parametrize("entry", list(reg.REGISTRY.values()), ids=lambda e: e.label)
def test_every_builtin_on_adversarial_inputs_is_bounded(entry: reg.Builtin) -> None:
    ran = 0
    for case in cases(entry):
        ran += 1
        out, units, peak = _run(case.source, case.variables)
        where = f"{entry.label}: {case!r}"
        if isinstance(out, ExpressionError):
            assert isinstance(out, (ExpressionRuntimeError, ExpressionLimitError)), f"{where}: {out!r}"
            assert "internal error" not in out.message, f"{where}: {out.message}"
            assert "time limit" not in out.message, f"{where}: {out.message}"  # the budget stopped it
        else:
            assert units <= BUDGET + R.CHUNK, where
        # A charge is made before its work: one that overdraws the budget stops the evaluation
        # before the work, so at most the budget's worth of work happened.
        paid = min(units, BUDGET + R.CHUNK)
        assert peak <= SLACK + BYTES_PER_UNIT * paid, (
            f"{where}: allocated {peak / 1e6:.1f} MB, paid {paid} units"
        )
    assert ran, entry.label
