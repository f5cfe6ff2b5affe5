"""Quarantine of definitions that keep exceeding the engine's limits (issue #10)."""

from __future__ import annotations

import pytest

from workload_map.errors import DefinitionQuarantinedError, ExpressionLimitError, ResolveError
from workload_map.expr import compile_expression
from workload_map.quarantine import Quarantine, exceeded_limits

#: The issue's doubling bomb: the engine's cost model stops it with ExpressionLimitError.
BOMB = compile_expression(
    "reduce (" + ",".join(map(str, range(32))) + ') as $i ("a"; [., .]) | tojson | length'
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def over_budget() -> None:
    try:
        BOMB.all(None)
    except ExpressionLimitError as exc:
        raise ResolveError('karta "bad": failed to evaluate') from exc


def missing_field() -> None:
    raise ResolveError('karta "bad": .spec.template is null')


def test_exceeded_limits_follows_the_cause_chain() -> None:
    with pytest.raises(ResolveError) as info:
        over_budget()
    assert exceeded_limits(info.value)
    assert not exceeded_limits(ResolveError("plain"))


def test_three_limit_failures_quarantine_then_one_probe_doubles_or_lifts() -> None:
    clock = Clock()
    q = Quarantine(threshold=3, period=60, max_period=200, clock=clock)
    ran: list[int] = []

    def hostile() -> None:
        ran.append(1)
        over_budget()

    for _ in range(3):
        with pytest.raises(ResolveError):
            q.run("bad", hostile)
    assert len(ran) == 3
    # Quarantined: nothing runs, the error names the definition and the last failure.
    for _ in range(100):
        with pytest.raises(DefinitionQuarantinedError, match=r'"bad" is quarantined \(retried in 60s\)'):
            q.run("bad", hostile)
    assert len(ran) == 3
    assert q.run("good", lambda: 7) == 7  # other definitions are untouched
    clock.now += 61
    with pytest.raises(ResolveError):
        q.run("bad", hostile)  # the probe
    assert len(ran) == 4
    state = q.state("bad")
    assert state is not None and state.period == 120 and state.times == 2 and state.active(clock.now)
    clock.now += 121
    with pytest.raises(ResolveError):
        q.run("bad", hostile)
    assert q.state("bad").period == 200  # type: ignore[union-attr]  # capped at max_period
    clock.now += 201
    assert q.run("bad", lambda: "fixed") == "fixed"
    state = q.state("bad")
    assert state is not None and not state.active(clock.now) and state.consecutive == 0 and state.total == 5
    assert state.to_dict(clock.now)["quarantined"] is False


def test_only_one_probe_at_a_time() -> None:
    clock = Clock()
    q = Quarantine(threshold=1, period=10, clock=clock)
    with pytest.raises(ResolveError):
        q.run("bad", over_budget)
    clock.now += 11
    assert q.admit("bad") is None  # this caller probes
    assert q.admit("bad") is not None  # the others wait for its outcome
    q.succeeded("bad")
    assert q.admit("bad") is None


def test_ordinary_errors_never_quarantine() -> None:
    q = Quarantine(threshold=2, clock=Clock())
    for _ in range(10):
        with pytest.raises(ResolveError):
            q.run("strict", missing_field)
    assert q.admit("strict") is None and q.state("strict") is None


def test_a_success_between_failures_resets_the_count() -> None:
    q = Quarantine(threshold=2, clock=Clock())
    for _ in range(5):
        with pytest.raises(ResolveError):
            q.run("flaky", over_budget)
        q.run("flaky", lambda: None)
    assert q.admit("flaky") is None
    q.forget("flaky")
    assert q.states() == []
