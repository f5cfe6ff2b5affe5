"""Dates (``gmtime``, ``mktime``, ``strftime``, ``strptime``, ``todate``, ``fromdate``...) agree
with libjq (the ``jq`` binding: libjq on glibc, C locale, UTC) on answers and error texts, and
run in time linear in their format and input.

The reference is run, not assumed: every case and every generated format below goes through both
engines. Issue 23's date attacks (a multi-megabyte format, a huge strftime format, nan/inf/1e300,
a repeated ``%Y``) are among the cases.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.errors import ExpressionError, ExpressionLimitError
from workload_map.expr import runtime as R
from workload_map.expr import set_limits

from .metering import evaluate
from .test_conformance import libjq_result, our_result


@pytest.fixture(autouse=True)
def no_deadline() -> Iterator[None]:
    set_limits(deadline=3600.0)
    yield
    set_limits(deadline=R.DEFAULT_DEADLINE, budget=R.COST_BUDGET)


def _canon(result: tuple[str, Any]) -> Any:
    kind, value = result

    def number(x: Any) -> Any:
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            return [number(y) for y in x] if isinstance(x, list) else x
        return None if isinstance(x, float) and math.isnan(x) else float(x)

    return kind, number(value) if kind == "ok" else value


def _agree(src: str, data: Any) -> None:
    ref = libjq_result(src, data)
    ours = our_result(src, data)
    assert _canon(ours) == _canon(ref), f"{src} on {data!r}: ours={ours!r} libjq={ref!r}"


NAN, INF = math.nan, math.inf
CASES: list[tuple[str, Any]] = [
    # the non-finite and out-of-range numbers: libjq's errors, never Python's
    ("todate", NAN),
    ("todate", INF),
    ("todate", -INF),
    ("todate", 1e300),
    ("todate", -1e300),
    ("gmtime", NAN),
    ("gmtime", 1e300),
    ("gmtime", 1e17),
    ("gmtime", 6.7e16),
    ("gmtime", -6.7e16),
    ('strftime("%Y")', NAN),
    ('strftime("%Y")', [1e300, 0, 1, 0, 0, 0, 0, 0]),
    ('strftime("%Y")', [NAN, 0, 1, 0, 0, 0, 0, 0]),
    ("mktime", [NAN, 0, 1, 0, 0, 0, 0, 0]),
    ("mktime", [1e300, 0, 1, 0, 0, 0, 0, 0]),
    ("mktime", [-1e300, 0, 1, 0, 0, 0]),
    ("mktime", [2024, 1e300, 1, 0, 0, 0]),
    ("mktime", [2024, 0, 1, 0, 0, INF]),
    ("mktime", [1969, 11, 31, 23, 59, 59]),  # -1: glibc's failure value, so libjq fails
    ("mktime", [2147485547, 11, 31, 23, 59, 60]),
    ("mktime", [2024]),
    ("mktime", []),
    ("mktime", "x"),
    ("mktime", [2024, "a"]),
    ("todate", [2147485547, 11, 31, 23, 59, 59]),
    ("todate", [1e300, 0, 1, 0, 0, 0, 0, 0]),
    # repeated %Y and friends
    ('strftime("%Y%Y%Y")', 0),
    (f"strftime({json.dumps('%Y' * 100)})", 0),  # past libjq's buffer: its "unknown system failure"
    ('strptime("%Y %Y")', "2015 2016"),
    ('strptime("%Y%Y")', "10"),
    ('strptime("%Y")', "12345"),
    # documented formats and the usual round trips
    ("todate", 1425599507),
    ("todate", 1425599507.9),
    ("todate", -1.5),
    ("gmtime", -1.5),
    ("gmtime", 1425599507.9),
    ("fromdate", "2015-03-05T23:51:47Z"),
    ("fromdate", "2015-03-05T23:51:47Z x"),
    ("fromdate", "2015-03-05T23:51:47+0100"),
    ("fromdate", 1),
    ('strptime("%Y-%m-%dT%H:%M:%SZ") | mktime', "2015-03-05T23:51:47Z"),
    ('strptime("%A, %B %d, %Y")', "Thursday, March 05, 2015"),
    ('strptime("%c")', "Thu Mar  5 23:51:47 2015"),
    ('strptime("%s")', "1425599507"),
    ('strptime("%d/%m/%y %I:%M %p")', "05/03/15 11:51 PM"),
    ('strptime("%Y-%j")', "2015-366"),
    ('strptime("%Y %U %w")', "2015 10 3"),
    ('strptime("%C %y")', "20 5"),
    ('strptime("%z")', "+05:30"),
    ('strptime("%a")', "SunMon"),
    ('strptime("%Y")', "2015\u0000x"),
    ('strftime("%A %a %B %b %c %C %d %D %e %F %g %G %h %H %I %j %k %l %m %M %n %p %P %r %R %s")', 1425599507),
    (
        'strftime("%S %t %T %u %U %V %w %W %x %X %y %Y %z %Z %% %Q %5Y %-d %_d %^a %#Z %Ey %Od %10z")',
        1425599507,
    ),
    ('strftime("%G %g %V %C %y %Y")', [-101, 0, 1, 0, 0, 0, 0, 0]),
    ('strftime("%A %j")', [2024, 13, 40, 25, 61, 61, 9, 400]),
    ("strftime(null)", 1),
    ('strftime("%Y")', "x"),
    ('strptime("%Y")', 1),
    ("strptime(1)", "2015"),
    ("now | type", None),
]


@pytest.mark.parametrize(("src", "data"), CASES, ids=[f"{s} on {d!r}"[:60] for s, d in CASES])
def test_dates_agree_with_libjq(src: str, data: Any) -> None:
    _agree(src, data)


_CONVERSIONS = "aAbBcCdDeFgGhHIjklmMnpPrRsStTuUVwWxXyYzZ%"
_DIRECTIVE = st.builds(
    lambda flags, width, modifier, conv: f"%{flags}{width}{modifier}{conv}",
    st.sampled_from(["", "", "_", "-", "0", "^", "#", "^#"]),
    st.sampled_from(["", "", "", "1", "3", "10"]),
    st.sampled_from(["", "", "", "", "E", "O"]),
    st.sampled_from(_CONVERSIONS + "Qq+"),
)
_FORMAT = st.lists(
    st.one_of(_DIRECTIVE, st.sampled_from(["-", ":", " ", "T", "Z", "x", "\u00e9"])), max_size=6
).map("".join)
_TIME = st.one_of(
    st.integers(-(10**12), 10**12),
    st.floats(-1e10, 1e10),
    st.sampled_from([0, -1, 951782400, 253402300799, -62135596800]),
    st.lists(st.integers(-3000, 3000), min_size=1, max_size=8),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_FORMAT, _TIME)
def test_strftime_and_strptime_agree_with_libjq_on_generated_formats(fmt: str, t: Any) -> None:
    src = f"strftime({json.dumps(fmt)})"
    ref = libjq_result(src, t)
    assert _canon(our_result(src, t)) == _canon(ref), f"{src} on {t!r}"
    if ref[0] == "ok":  # read back what libjq wrote (the round trip the formats exist for)
        _agree(f"strptime({json.dumps(fmt)})", ref[1][0])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(2**70), 2**70)))
def test_numbers_of_any_size_give_libjq_answers_or_errors(x: Any) -> None:
    for src in ("todate", "gmtime", "[., 0, 1, 0, 0, 0] | mktime", "[2024, 0, 1, 0, 0, .] | mktime"):
        _agree(src, x)


def _units(src: str, data: Any, fmt: str) -> tuple[Any, int, int]:
    """(answer or error, units, peak bytes) of ``src`` with the (long) format as ``$f``."""
    return evaluate(src, data, {"f": fmt})


def test_a_multi_megabyte_format_ends_in_the_budget() -> None:
    # Python's time.strptime compiled this into a regex with 500,000 groups (minutes); here each
    # directive is charged as it is read.
    out, _, peak = _units("strptime($f)", "2015" * 500_000, "%Y" * 500_000)
    assert isinstance(out, ExpressionLimitError) and "cost budget" in out.message
    assert peak < 64 << 20
    # (when the input runs out first, it is libjq's error, just as fast)
    out, units, _ = _units("strptime($f)", "2015", "%Y" * 500_000)
    assert isinstance(out, ExpressionError) and out.message.startswith('date "2015" does not match format')
    assert units < 100_000
    out, _, peak = _units("strftime($f) | length", 0, "%c" * 1_000_000)
    assert isinstance(out, ExpressionLimitError) and "cost budget" in out.message
    assert peak < 64 << 20


def test_formats_are_read_in_linear_time() -> None:
    # Literal text is matched in runs: a format twice as long costs about twice as much.
    costs = []
    for n in (500_000, 1_000_000):
        out, units, _ = _units("strptime($f)", "-" * n + "2015", "-" * n + "%Y")
        assert out == [[2015, 0, 0, 0, 0, 0, 3, -1]]
        costs.append(units)
    assert costs[1] <= 2.2 * costs[0], costs
    # strftime's output is capped at the format's length plus 100 bytes, as libjq's buffer is
    out, units, _ = _units("strftime($f)", 0, "%Y" * 1000)
    assert isinstance(out, ExpressionError) and out.message == "strftime/1: unknown system failure"
    assert units < 20_000
