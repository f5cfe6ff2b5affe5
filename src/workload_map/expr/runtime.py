"""Helpers called by generated code: errors, budget, truthiness, ordering, indexing, arithmetic.

Everything here is written for the hot path: type checks use ``type(x) is ...`` (so ``bool`` is
never mistaken for ``int``), and common cases return before any general logic.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterable
from typing import Any, NoReturn

MAX_RESULTS = 1000
MAX_STRING = 10_000_000  # characters
MAX_ARRAY = 1_000_000  # elements
# The cost model: one unit per loop step or function call, per container node a builtin reads
# or builds, and per STRING_UNIT characters of text it reads or builds. The budget bounds both
# time and memory (every allocation is charged before it happens); the deadline is the second
# guard, checked each CHUNK units.
COST_BUDGET = 1_000_000
STRING_UNIT = 32
# A jq function call creates Python generators and closures: about fifty loop steps' time.
CALL_COST = 64
CHUNK = 4096
DEFAULT_DEADLINE = 0.25  # seconds
# The default budget takes about the default deadline: one unit is about this much time. Work done
# in C that can only be timed (an RE2 search rescanning its subject) is charged at this rate.
SECONDS_PER_UNIT = DEFAULT_DEADLINE / COST_BUDGET
# Error messages show at most this much of a value (jq prints all of it; a value built by jq can
# stand for an exponential tree, so ours is cut).
MESSAGE_CHARS = 4096


class Limits:
    """Process-wide evaluation limits (``set_limits``); read at the start of every evaluation."""

    budget: int = COST_BUDGET
    deadline: float = DEFAULT_DEADLINE


def set_limits(*, budget: int | None = None, deadline: float | None = None) -> None:
    """Change the per-evaluation cost budget (units) and wall-clock deadline (seconds)."""
    if budget is not None:
        if budget < 1:
            raise ValueError("budget must be positive")
        Limits.budget = budget
    if deadline is not None:
        if not deadline > 0:
            raise ValueError("deadline must be positive")
        Limits.deadline = deadline
    TEMPLATE[:] = _template(Limits.budget)


class JqError(Exception):
    """A jq-level error: catchable by ``try`` / ``?``. ``value`` is what ``catch`` receives."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value

    @property
    def message(self) -> str:
        v = self.value
        if type(v) is str:
            return v
        if type(v) is dict or type(v) is list:
            return f"{dump(v, MESSAGE_CHARS)} (not a string)"
        return f"{dump(v, MESSAGE_CHARS)} ({type_name(v)}) not a string"


class JqPathError(JqError):
    """``Invalid path expression ...``: still catchable by ``try`` like in jq."""


class LimitExceeded(Exception):
    """A safety bound was hit. Deliberately not a JqError so ``try`` cannot swallow it."""


class BreakOut(Exception):
    def __init__(self, label: object) -> None:
        super().__init__("break")
        self.label = label


class Nothing:
    """Sentinel for 'no output' in early-exit helpers."""

    __slots__ = ()


NOTHING = Nothing()


# A meter is ``[units left in this chunk, units not yet issued, deadline or 0.0, budget]``. Every
# evaluation owns one: generated code keeps it in the local ``_b``, decrements slot 0 inline and
# calls ``over_budget`` when it goes negative; every builtin that does work proportional to its
# input receives it as its first argument (the registry's cost rule says which). A deadline below
# zero marks an unmetered meter (``unmetered()``: helpers called outside an evaluation).
Meter = list[Any]


def _template(budget: int) -> Meter:
    chunk = CHUNK if budget > CHUNK else budget
    return [chunk, budget - chunk, 0.0, budget]


# Every evaluation starts from a copy of this meter.
TEMPLATE: Meter = _template(COST_BUDGET)


def start() -> Meter:
    """A fresh meter for one evaluation (what generated code makes when it is given none)."""
    return TEMPLATE[:]


def unmetered() -> Meter:
    """A meter that never runs out: for helpers called outside an evaluation (messages, the
    public ``getpath``/``setpath``)."""
    return [1 << 62, 0, -1.0, 0]


def used(meter: Meter) -> int:
    """Units charged to ``meter`` so far."""
    return int(meter[3] - meter[0] - meter[1])


def meter_prologue() -> list[str]:
    """Generated statements that give an evaluation its meter: the caller's (``_b`` parameter,
    for measurements) or a copy of TEMPLATE, which ``set_limits`` updates in place."""
    return ["if _b is None: _b = R_template[:]"]


def over_budget(meter: Meter) -> None:
    """Slot 0 went negative: pay the overdraft from the reserve, issue the next chunk, check the
    deadline. Raises LimitExceeded when the budget or the time is used up."""
    if meter[2] < 0:  # unmetered
        meter[0] = 1 << 62
        return
    reserve = meter[1] + meter[0]  # meter[0] <= 0: the overdraft
    now = time.monotonic()
    if meter[2] == 0.0:
        meter[2] = now + Limits.deadline
    elif now > meter[2]:
        raise LimitExceeded(f"evaluation exceeded its time limit of {Limits.deadline:g} s")
    if reserve <= 0:
        raise _budget_exceeded(meter)
    chunk = CHUNK if reserve > CHUNK else reserve
    meter[0] = chunk
    meter[1] = reserve - chunk


def _budget_exceeded(meter: Meter) -> LimitExceeded:
    return LimitExceeded(
        f"evaluation exceeded its cost budget of {meter[3]} units "
        "(loop steps, values read and built; possible unbounded loop or value explosion)"
    )


def charge(meter: Meter, units: int) -> None:
    """Charge ``meter`` before doing work or allocating proportional to ``units``."""
    meter[0] -= units
    if meter[0] < 0:
        over_budget(meter)


def charge_text(meter: Meter, length: int) -> None:
    """Charge for reading or building ``length`` characters; fails above MAX_STRING."""
    if length > MAX_STRING:
        raise LimitExceeded(f"string length exceeds the allowed {MAX_STRING} characters")
    if length > STRING_UNIT:
        meter[0] -= length // STRING_UNIT
        if meter[0] < 0:
            over_budget(meter)


def afford(meter: Meter, units: int) -> None:
    """Refuse, before a step whose work is only known afterwards, when the budget left could not
    pay for its worst case (``units``); the step then charges what it did. Also checks the
    deadline, so a sequence of such steps stops on time."""
    if meter[2] < 0:
        return
    if units > meter[0] + meter[1]:
        raise _budget_exceeded(meter)
    if meter[2] and time.monotonic() > meter[2]:
        raise LimitExceeded(f"evaluation exceeded its time limit of {Limits.deadline:g} s")


def charge_seconds(meter: Meter, seconds: float, at_least: int) -> None:
    """Charge a step done in C whose work cannot be observed, only timed (an RE2 search that
    rescans the subject): ``at_least`` units, or the time it took at SECONDS_PER_UNIT if more."""
    units = int(seconds / SECONDS_PER_UNIT)
    charge(meter, units if units > at_least else at_least)


_FLAT = frozenset({str, int, float, bool, type(None)})


def _text_length(items: Iterable[Any]) -> int:
    return sum(len(x) for x in items if type(x) is str)


def measure(meter: Meter, v: Any, limit: int = MAX_ARRAY) -> int:
    """Charge for walking ``v`` and return its size in units (nodes plus text), refusing values
    over ``limit`` units before anything proportional to their expanded size is built. Values
    built by jq can share children (``[.,.]`` repeated), so a small object can stand for an
    exponential tree: every builtin that walks a whole value measures it first."""
    t = type(v)
    if t is not list and t is not dict:
        return len(v) // STRING_UNIT + 1 if t is str else 1
    # Flat lists and objects (labels, annotations: the common case): counted in C, no walk.
    items = v if t is list else v.values()
    # (the type scan itself is one unit per 16 elements: paid before it runs)
    if len(v) > 4 * STRING_UNIT:
        charge(meter, len(v) // 16)
    if (kinds := set(map(type, items))) <= _FLAT:
        total = len(v) + 1
        if str in kinds:
            total += (sum(map(len, items)) if len(kinds) == 1 else _text_length(items)) // STRING_UNIT
        if t is dict:
            total += sum(map(len, v)) // STRING_UNIT  # the keys' text
        if total > limit:
            raise LimitExceeded(f"value too large: more than {limit} elements when expanded")
        charge(meter, total)
        return total
    total = 0
    stack = [v]
    while stack:
        x = stack.pop()
        tx = type(x)
        if tx is list or tx is dict:
            n = len(x) + 1
        elif tx is str:
            n = len(x) // STRING_UNIT + 1
        else:
            n = 1
        total += n
        if total > limit:
            raise LimitExceeded(f"value too large: more than {limit} elements when expanded")
        meter[0] -= n
        if meter[0] < 0:
            over_budget(meter)
        # (the walk's own stack grows by what was just paid for)
        if tx is list:
            stack.extend(x)
        elif tx is dict:
            stack.extend(x.values())
    return total


def too_many_results() -> NoReturn:
    raise LimitExceeded(f"query results exceed the allowed number {MAX_RESULTS}")


# --- types, messages ---------------------------------------------------------

_TYPE_NAMES: dict[type, str] = {
    type(None): "null",
    bool: "boolean",
    int: "number",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def type_name(v: Any) -> str:
    return _TYPE_NAMES.get(type(v), "object")


def dump(v: Any, cap: int) -> str:
    """At most about ``cap`` characters of ``v``'s JSON text, ``...`` when cut: for messages,
    bounded whatever the value (work proportional to ``cap``, never to the value's size)."""
    from .values import dump_prefix

    return dump_prefix(v, cap)


def describe(v: Any, limit: int = 40) -> str:
    """``string ("abc")`` style, truncated like jq (value text capped at ~40 characters)."""
    try:
        text = dump(v, limit)
    except RecursionError:
        text = "..."
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type_name(v)} ({text})"


def is_true(v: Any) -> bool:
    return v is not None and v is not False


# --- ordering and equality ------------------------------------------------------

_ORDER = {type(None): 0, bool: 1, int: 3, float: 3, str: 4, list: 5, dict: 6}


def compare(a: Any, b: Any) -> int:
    """jq's total order: null < false < true < numbers < strings < arrays < objects. Uncharged:
    callers measure what it may walk first (``_compare_measured``, ``sort_values``)."""
    ta = type(a)
    tb = type(b)
    if ta is tb and (ta is str or ta is int):
        return -1 if a < b else (1 if a > b else 0)
    oa = _ORDER.get(ta, 6)
    ob = _ORDER.get(tb, 6)
    if ta is bool:
        oa = 2 if a else 1
    if tb is bool:
        ob = 2 if b else 1
    if oa != ob:
        return -1 if oa < ob else 1
    if oa == 3:
        # jq sorts nan below every number
        if a != a:
            return 0 if b != b else -1
        if b != b:
            return 1
        return -1 if a < b else (1 if a > b else 0)
    if oa == 4:
        return -1 if a < b else (1 if a > b else 0)
    if oa == 5:
        for x, y in zip(a, b, strict=False):
            c = compare(x, y)
            if c:
                return c
        return -1 if len(a) < len(b) else (1 if len(a) > len(b) else 0)
    if oa == 6:
        ka = sorted(a)
        kb = sorted(b)
        if ka != kb:
            return compare(ka, kb)
        for k in ka:
            c = compare(a[k], b[k])
            if c:
                return c
        return 0
    return 0


def jeq(meter: Meter, a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is str:  # the common case, without a second call
        if len(a) > STRING_UNIT and type(b) is str and len(b) == len(a):
            charge_text(meter, len(a))  # equal lengths: compared character by character
        return bool(a == b)
    if a is None:
        return b is None
    if (ta is list or ta is dict) and ta is type(b):
        measure(meter, a)  # the comparison walks at most this much
    return jeq_unmetered(a, b)


def jeq_unmetered(a: Any, b: Any) -> bool:
    """jq's ``==`` without charging: for callers that measured what it may walk."""
    ta = type(a)
    if ta is str or a is None:
        return bool(a == b)
    tb = type(b)
    if ta is bool or tb is bool:
        return a is b
    if ta is list:
        return (
            tb is list and len(a) == len(b) and all(jeq_unmetered(x, y) for x, y in zip(a, b, strict=False))
        )
    if ta is dict:
        if tb is not dict or len(a) != len(b):
            return False
        return all(not (k not in b or not jeq_unmetered(v, b[k])) for k, v in a.items())
    if (ta is int or ta is float) and (tb is int or tb is float):
        return bool(a == b)
    return False


def jne(meter: Meter, a: Any, b: Any) -> bool:
    return not jeq(meter, a, b)


def lt(meter: Meter, a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a < b)
    return _compare_measured(meter, a, b) < 0


def le(meter: Meter, a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a <= b)
    return _compare_measured(meter, a, b) <= 0


def gt(meter: Meter, a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a > b)
    return _compare_measured(meter, a, b) > 0


def ge(meter: Meter, a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a >= b)
    return _compare_measured(meter, a, b) >= 0


def _compare_measured(meter: Meter, a: Any, b: Any) -> int:
    # Both sides: comparing objects sorts the keys of each (``{} < $huge`` lists all of $huge's).
    _measure_compared(meter, a)
    _measure_compared(meter, b)
    return compare(a, b)


def _measure_compared(meter: Meter, v: Any) -> None:
    t = type(v)
    if t is list or t is dict:
        measure(meter, v)
    elif t is str and len(v) > STRING_UNIT:
        charge_text(meter, len(v))


class SortKey:
    """Wraps a value so Python's stable sort uses jq's order."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v

    def __lt__(self, other: SortKey) -> bool:
        return compare(self.v, other.v) < 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SortKey) and compare(self.v, other.v) == 0

    __hash__ = None  # type: ignore[assignment]


def sort_values(meter: Meter, items: list[Any]) -> list[Any]:
    """jq's sort, charged before it runs: n log n comparisons, each as deep as the values (text
    included: strings with a long common prefix compare slowly)."""
    if not items:
        return []
    n = len(items)
    rounds = n.bit_length()
    charge(meter, n)  # the type scan below
    t0 = type(items[0])
    if t0 is int and all(type(x) is int for x in items):
        if n > 16:
            charge(meter, n * rounds // 4)
        return sorted(items)
    # n log n comparisons, each as deep as the values compared.
    charge(meter, measure(meter, items) * rounds // 4)
    if t0 is str and all(type(x) is str for x in items):
        return sorted(items)
    return sorted(items, key=SortKey)


# --- indexing ----------------------------------------------------------------------


def index(meter: Meter, v: Any, k: Any) -> Any:
    """``v[k]`` with jq semantics."""
    tv = type(v)
    tk = type(k)
    if tv is dict:
        if tk is str:
            return v.get(k)
        raise JqError(f"Cannot index object with {describe_key(k)}")
    if v is None:
        if tk is str or tk is int or tk is float or tk is dict:
            return None
        raise JqError(f"Cannot index null with {describe_key(k)}")
    if tv is list:
        if tk is int:
            n = len(v)
            if k < 0:
                k += n
                if k < 0:
                    return None
            return v[k] if k < n else None
        if tk is float:
            if k != k or k in (math.inf, -math.inf):
                return None
            return index(meter, v, math.floor(k))
        if tk is dict:
            return slice_value(meter, v, k.get("start"), k.get("end"))
        if tk is list:
            return indices_of(meter, v, k)
        raise JqError(f"Cannot index array with {describe_key(k)}")
    if tv is str and tk is dict:
        return slice_value(meter, v, k.get("start"), k.get("end"))
    raise JqError(f"Cannot index {type_name(v)} with {describe_key(k)}")


def describe_key(k: Any) -> str:
    if type(k) is str:
        return f'string ("{k[:37] + "..." if len(k) > 40 else k}")'
    return describe(k)


def field_error(v: Any, k: str) -> Any:
    """Slow path of generated ``.foo`` code: the input is not an object."""
    if v is None:
        return None
    raise JqError(f"Cannot index {type_name(v)} with {describe_key(k)}")


def iter_error(v: Any) -> NoReturn:
    raise JqError(f"Cannot iterate over {describe(v)}")


def iterable(v: Any) -> Any:
    tv = type(v)
    if tv is list:
        return v
    if tv is dict:
        return v.values()
    iter_error(v)


def _clamp_slice_index(i: Any, n: int, default: int) -> int:
    if i is None:
        return default
    if type(i) is not int:
        if type(i) is not float:
            raise JqError("Start and end indices of an array slice must be numbers")
        if i != i:
            i = 0
        elif i == math.inf:
            i = n
        elif i == -math.inf:
            i = -n
        else:
            i = math.floor(i)
    if i < 0:
        i = max(0, n + i)
    return min(int(i), n)


def slice_value(meter: Meter, v: Any, start: Any, end: Any) -> Any:
    """``v[start:end]``: a copy, charged by its length (one unit per element, per 32 characters)."""
    if v is None:
        return None
    tv = type(v)
    if tv is not list and tv is not str:
        raise JqError(f"Cannot index {type_name(v)} with object")
    n = len(v)
    s = _clamp_slice_index(start, n, 0)
    e = _clamp_slice_index(end, n, n)
    if e < s:
        e = s
    if tv is list:
        charge(meter, e - s)
    else:
        charge_text(meter, e - s)
    return v[s:e]


def indices_of(meter: Meter, v: Any, x: Any) -> Any:
    """jq's ``indices`` (libjq 1.8's definition): occurrences of a sub-array in an array (a
    non-array needle is a one-element one), of a substring in a string (overlapping), and
    ``.[x]`` for anything else.

    Strings: one pass of ``str.find`` over the subject (linear, charged up front) and, per
    occurrence, the comparison of the whole needle that confirmed it (an overlapping needle of
    length m in a subject of length n is n*m character comparisons, not n) and the index built.
    Arrays: every position compared with every needle element."""
    tv = type(v)
    if tv is str and type(x) is str:
        if not x:
            return []
        charge_text(meter, len(v) + len(x))
        per_hit = 1 + len(x) // STRING_UNIT
        out = []
        i = v.find(x)
        while i >= 0:
            meter[0] -= per_hit
            if meter[0] < 0:
                over_budget(meter)
            out.append(i)
            i = v.find(x, i + 1)
        return out
    if tv is list:
        if type(x) is not list:
            charge(meter, len(v) * measure(meter, x))
            return [i for i, y in enumerate(v) if jeq(meter, y, x)]
        if not x:
            return []
        m = len(x)
        charge(meter, len(v) * m + measure(meter, x))
        return [i for i in range(len(v) - m + 1) if all(jeq(meter, v[i + j], x[j]) for j in range(m))]
    return index(meter, v, x)


def _stream_count(n: Any, negative: str) -> float:
    """libjq 1.8's checks on ``limit``'s and ``nth``'s count: below 0 in jq's order (null,
    booleans, nan, negative numbers) is an error; so is a non-number (its ``$n - 1`` fails)."""
    if compare(n, 0) < 0:
        raise JqError(negative)
    if type(n) is not int and type(n) is not float:
        raise JqError(f"{describe(n)} and number (1) cannot be subtracted")
    return float(n) if type(n) is float else n


def limit_count(n: Any) -> int:
    """How many outputs ``limit(n; f)`` takes: n rounded up (all of them for huge n)."""
    count = _stream_count(n, "limit doesn't support negative count")
    return sys.maxsize if count >= sys.maxsize else math.ceil(count)


def nth_index(n: Any) -> int:
    """Which output ``nth(n; f)`` is: n rounded down (none for huge n)."""
    index = _stream_count(n, "nth doesn't support negative indices")
    return sys.maxsize - 1 if index >= sys.maxsize - 1 else math.floor(index)


def interpolate(meter: Meter, *parts: str) -> str:
    """A string interpolation's result, charged by its length before it is built (the pieces
    may be megabyte strings, which ``tostring`` returns as they are)."""
    total = 0
    for part in parts:
        total += len(part)
    if total > STRING_UNIT:
        charge_text(meter, total)
    return "".join(parts)


def object_key(k: Any) -> str:
    if type(k) is str:
        return k
    raise JqError(f"Cannot use {describe(k)} as object key")


def break_out(label: object) -> NoReturn:
    raise BreakOut(label)


def raise_error(v: Any) -> NoReturn:
    raise JqError(v)


# --- arithmetic -------------------------------------------------------------------


MAX_EXACT = 9007199254740992  # 2**53: beyond it jq's numbers are doubles


def _double(x: int | float) -> float:
    """A number as jq's double; integers too large for one become +-infinity like in jq."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _int_result(r: int) -> int | float:
    return r if -MAX_EXACT <= r <= MAX_EXACT else _double(r)


def _num(r: Any) -> Any:
    # Whole floats from arithmetic become ints so they print like jq ("3", not "3.0").
    if type(r) is float and r.is_integer() and -9007199254740992.0 <= r <= 9007199254740992.0:
        return int(r)
    return r


def add(meter: Meter, a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        r = a + b
        return r if -MAX_EXACT <= r <= MAX_EXACT else _int_result(r)
    if a is None:
        return b
    if b is None:
        return a
    if (ta is int or ta is float) and (tb is int or tb is float):
        return _num(_double(a) + _double(b))
    if ta is str and tb is str:
        n = len(a) + len(b)
        if n > STRING_UNIT:
            charge_text(meter, n)
        return a + b
    if ta is list and tb is list:
        n = len(a) + len(b)
        if n > MAX_ARRAY:
            raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
        charge(meter, n)
        return a + b
    if ta is dict and tb is dict:
        charge(meter, len(a) + len(b))
        r = dict(a)
        r.update(b)
        return r
    raise JqError(f"{describe(a)} and {describe(b)} cannot be added")


def sub(meter: Meter, a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        return _int_result(a - b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return _num(_double(a) - _double(b))
    if ta is list and tb is list:
        # every element of a compared with every element of b, each as deep as b's elements
        charge(meter, len(a) * (measure(meter, b) + 1))
        return [x for x in a if not any(jeq(meter, x, y) for y in b)]
    raise JqError(f"{describe(a)} and {describe(b)} cannot be subtracted")


def _deep_merge(meter: Meter, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    charge(meter, len(a) + len(b))
    r = dict(a)
    for k, v in b.items():
        old = r.get(k)
        if type(old) is dict and type(v) is dict:
            r[k] = _deep_merge(meter, old, v)
        else:
            r[k] = v
    return r


def _repeat(meter: Meter, s: str, n: Any) -> Any:
    # jq 1.8: negative or nan count -> null; otherwise the count is truncated ("x" * 0 -> "").
    if n != n or n < 0:
        return None
    if n > MAX_STRING:  # also infinity, before int() of it
        raise LimitExceeded(f"string length exceeds the allowed {MAX_STRING} characters")
    count = int(n)
    charge_text(meter, len(s) * count)
    return s * count


def mul(meter: Meter, a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        if -MAX_EXACT <= a <= MAX_EXACT and -MAX_EXACT <= b <= MAX_EXACT:
            r = a * b
            return r if -MAX_EXACT <= r <= MAX_EXACT else _int_result(r)
        return _num(_double(a) * _double(b))
    if (ta is int or ta is float) and (tb is int or tb is float):
        return _num(_double(a) * _double(b))
    if ta is str and (tb is int or tb is float):
        return _repeat(meter, a, b)
    if tb is str and (ta is int or ta is float):
        return _repeat(meter, b, a)
    if ta is dict and tb is dict:
        return _deep_merge(meter, a, b)
    raise JqError(f"{describe(a)} and {describe(b)} cannot be multiplied")


def div(meter: Meter, a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        if b == 0:
            raise JqError(f"{describe(a)} and {describe(b)} cannot be divided because the divisor is zero")
        if ta is int and tb is int and -MAX_EXACT <= a <= MAX_EXACT and a % b == 0:
            return a // b
        return _num(_double(a) / _double(b))
    if ta is str and tb is str:
        return split_string(meter, a, b)
    raise JqError(f"{describe(a)} and {describe(b)} cannot be divided")


def mod(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        if a != a or b != b:
            return math.nan
        ia = _to_int(a)
        ib = _to_int(b)
        if ib == 0:
            raise JqError(
                f"{describe(a)} and {describe(b)} cannot be divided (remainder) because the divisor is zero"
            )
        # jq truncates both operands to integers and keeps the dividend's sign (C semantics).
        r = abs(ia) % abs(ib)
        return -r if ia < 0 else r
    raise JqError(f"{describe(a)} and {describe(b)} cannot be divided (remainder)")


def _to_int(x: Any) -> int:
    if type(x) is int:
        return x
    if x == math.inf:
        return 2**63 - 1
    if x == -math.inf:
        return -(2**63)
    return int(x)


def neg(a: Any) -> Any:
    if type(a) is int or type(a) is float:
        return -a
    raise JqError(f"{describe(a)} cannot be negated")


def split_string(meter: Meter, a: str, sep: str) -> list[str]:
    """``a / sep`` and ``split(sep)``: one pass over ``a`` plus one unit per piece built (an
    empty separator splits into characters: a million one-character strings)."""
    charge_text(meter, len(a) * 2)
    if a == "":
        return []
    if sep == "":
        if len(a) > MAX_ARRAY:
            raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
        charge(meter, 2 * len(a))
        return list(a)
    pieces = a.count(sep) + 1
    if pieces > MAX_ARRAY:
        raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
    charge(meter, 2 * pieces)
    return a.split(sep)
