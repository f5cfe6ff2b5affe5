"""Helpers called by generated code: errors, budget, truthiness, ordering, indexing, arithmetic.

Everything here is written for the hot path: type checks use ``type(x) is ...`` (so ``bool`` is
never mistaken for ``int``), and common cases return before any general logic.
"""

from __future__ import annotations

import math
import threading
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
            return f"{dump(v)} (not a string)"
        return f"{dump(v)} ({type_name(v)}) not a string"


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


# A meter is ``[units left in this chunk, units not yet issued, deadline or 0.0, budget]``;
# generated code decrements slot 0 inline and calls ``over_budget`` when it goes negative.
Meter = list[Any]


class _Current(threading.local):
    # Outside an evaluation (a builtin called directly) charges go to an unmetered meter.
    meter: Meter = [1 << 62, 0, -1.0, 0]  # noqa: RUF012 (per-thread default, replaced by start())


_current = _Current()


def _template(budget: int) -> Meter:
    chunk = CHUNK if budget > CHUNK else budget
    return [chunk, budget - chunk, 0.0, budget]


# Every evaluation starts from a copy of this meter.
TEMPLATE: Meter = _template(COST_BUDGET)


def start() -> Meter:
    """A fresh meter for one evaluation, made current for the builtins on this thread. (The code
    generator inlines the same two steps, see ``meter_prologue``.)"""
    meter = TEMPLATE[:]
    _current.meter = meter
    return meter


def meter_prologue() -> list[str]:
    """Generated statements that do what ``start()`` does, without a call (hot path): a copy of
    TEMPLATE, which ``set_limits`` updates in place for every compiled expression."""
    return ["_b = R_template[:]", "R_current.meter = _b"]


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
        raise LimitExceeded(
            f"evaluation exceeded its cost budget of {meter[3]} units "
            "(loop steps, values read and built; possible unbounded loop or value explosion)"
        )
    chunk = CHUNK if reserve > CHUNK else reserve
    meter[0] = chunk
    meter[1] = reserve - chunk


def charge(units: int) -> None:
    """Charge the current evaluation before doing work or allocating proportional to ``units``."""
    meter = _current.meter
    meter[0] -= units
    if meter[0] < 0:
        over_budget(meter)


def charge_text(length: int) -> None:
    """Charge for reading or building ``length`` characters; fails above MAX_STRING."""
    if length > MAX_STRING:
        raise LimitExceeded(f"string length exceeds the allowed {MAX_STRING} characters")
    if length > STRING_UNIT:
        charge(length // STRING_UNIT)


_FLAT = frozenset({str, int, float, bool, type(None)})


def _text_length(items: Iterable[Any]) -> int:
    return sum(len(x) for x in items if type(x) is str)


def measure(v: Any, limit: int = MAX_ARRAY) -> int:
    """Charge for walking ``v`` and return its size in units (nodes plus text), refusing values
    over ``limit`` units before anything proportional to their expanded size is built. Values
    built by jq can share children (``[.,.]`` repeated), so a small object can stand for an
    exponential tree: every builtin that walks a whole value measures it first."""
    t = type(v)
    if t is not list and t is not dict:
        return len(v) // STRING_UNIT + 1 if t is str else 1
    # Flat lists and objects (labels, annotations: the common case): counted in C, no walk.
    items = v if t is list else v.values()
    if (kinds := set(map(type, items))) <= _FLAT:
        total = len(v) + 1
        if str in kinds:
            total += (sum(map(len, items)) if len(kinds) == 1 else _text_length(items)) // STRING_UNIT
        if t is dict:
            total += sum(map(len, v)) // STRING_UNIT  # the keys' text
        if total > limit:
            raise LimitExceeded(f"value too large: more than {limit} elements when expanded")
        charge(total)
        return total
    meter = _current.meter
    total = 0
    stack = [v]
    while stack:
        x = stack.pop()
        tx = type(x)
        if tx is list:
            n = len(x)
            stack.extend(x)
        elif tx is dict:
            n = len(x)
            stack.extend(x.values())
        elif tx is str:
            n = len(x) // STRING_UNIT
        else:
            n = 0
        n += 1
        total += n
        if total > limit:
            raise LimitExceeded(f"value too large: more than {limit} elements when expanded")
        meter[0] -= n
        if meter[0] < 0:
            over_budget(meter)
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


def dump(v: Any) -> str:
    from .values import tojson

    return tojson(v)


def describe(v: Any, limit: int = 40) -> str:
    """``string ("abc")`` style, truncated like jq (value text capped at ~40 characters)."""
    try:
        text = dump(v)
    except (LimitExceeded, RecursionError):
        text = "..."
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type_name(v)} ({text})"


def is_true(v: Any) -> bool:
    return v is not None and v is not False


# --- ordering and equality ------------------------------------------------------

_ORDER = {type(None): 0, bool: 1, int: 3, float: 3, str: 4, list: 5, dict: 6}


def compare(a: Any, b: Any) -> int:
    """jq's total order: null < false < true < numbers < strings < arrays < objects."""
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


def jeq(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is str or a is None:  # the common case, without a second call
        return bool(a == b)
    if (ta is list or ta is dict) and ta is type(b):
        measure(a)  # the comparison walks at most this much
    return _jeq(a, b)


def _jeq(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is str or a is None:
        return bool(a == b)
    tb = type(b)
    if ta is bool or tb is bool:
        return a is b
    if ta is list:
        return tb is list and len(a) == len(b) and all(_jeq(x, y) for x, y in zip(a, b, strict=False))
    if ta is dict:
        if tb is not dict or len(a) != len(b):
            return False
        return all(not (k not in b or not _jeq(v, b[k])) for k, v in a.items())
    if (ta is int or ta is float) and (tb is int or tb is float):
        return bool(a == b)
    return False


def jne(a: Any, b: Any) -> bool:
    return not jeq(a, b)


def lt(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a < b)
    return _compare_measured(a, b) < 0


def le(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a <= b)
    return _compare_measured(a, b) <= 0


def gt(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a > b)
    return _compare_measured(a, b) > 0


def ge(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a >= b)
    return _compare_measured(a, b) >= 0


def _compare_measured(a: Any, b: Any) -> int:
    if type(a) is list or type(a) is dict:
        measure(a)
    return compare(a, b)


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


def sort_values(items: list[Any]) -> list[Any]:
    if not items:
        return []
    n = len(items)
    t0 = type(items[0])
    if (t0 is str or t0 is int) and all(type(x) is t0 for x in items):
        if n > 16:
            charge(n * n.bit_length() // 4)
        return sorted(items)
    # n log n comparisons, each as deep as the values compared.
    charge(measure(items) * n.bit_length() // 4)
    return sorted(items, key=SortKey)


# --- indexing ----------------------------------------------------------------------


def index(v: Any, k: Any) -> Any:
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
            return index(v, math.floor(k))
        if tk is dict:
            return slice_value(v, k.get("start"), k.get("end"))
        if tk is list:
            return indices_of(v, k)
        raise JqError(f"Cannot index array with {describe_key(k)}")
    if tv is str and tk is dict:
        return slice_value(v, k.get("start"), k.get("end"))
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


def slice_value(v: Any, start: Any, end: Any) -> Any:
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
    return v[s:e]


def indices_of(v: Any, x: Any) -> Any:
    if v is None:
        return None
    if type(v) is str:
        if type(x) is not str:
            raise JqError(f"Cannot determine indices of {describe(x)} in a string")
        if not x:
            return None
        charge_text(len(v) * 2)
        out = []
        i = v.find(x)
        while i >= 0:
            out.append(i)
            i = v.find(x, i + 1)
        return out
    if type(v) is list:
        if type(x) is list:
            if not x:
                return None
            m = len(x)
            charge(len(v) * m)
            return [i for i in range(len(v) - m + 1) if all(jeq(v[i + j], x[j]) for j in range(m))]
        charge(len(v) * measure(x))
        return [i for i, y in enumerate(v) if jeq(y, x)]
    raise JqError(f"Cannot determine indices in {describe(v)}")


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


def check_size(v: Any) -> Any:
    if type(v) is str:
        if len(v) > MAX_STRING:
            raise LimitExceeded(f"string length exceeds the allowed {MAX_STRING} characters")
    elif len(v) > MAX_ARRAY:
        raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
    return v


def add(a: Any, b: Any) -> Any:
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
            charge_text(n)
        return a + b
    if ta is list and tb is list:
        n = len(a) + len(b)
        if n > MAX_ARRAY:
            raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
        charge(n)
        return a + b
    if ta is dict and tb is dict:
        charge(len(a) + len(b))
        r = dict(a)
        r.update(b)
        return r
    raise JqError(f"{describe(a)} and {describe(b)} cannot be added")


def sub(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        return _int_result(a - b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return _num(_double(a) - _double(b))
    if ta is list and tb is list:
        charge(len(a) * (len(b) + 1))
        return [x for x in a if not any(jeq(x, y) for y in b)]
    raise JqError(f"{describe(a)} and {describe(b)} cannot be subtracted")


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    charge(len(a) + len(b))
    r = dict(a)
    for k, v in b.items():
        old = r.get(k)
        if type(old) is dict and type(v) is dict:
            r[k] = _deep_merge(old, v)
        else:
            r[k] = v
    return r


def _repeat(s: str, n: Any) -> Any:
    # jq 1.8: negative or nan count -> null; otherwise the count is truncated ("x" * 0 -> "").
    if n != n or n < 0:
        return None
    if n > MAX_STRING:  # also infinity, before int() of it
        raise LimitExceeded(f"string length exceeds the allowed {MAX_STRING} characters")
    count = int(n)
    charge_text(len(s) * count)
    return s * count


def mul(a: Any, b: Any) -> Any:
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
        return _repeat(a, b)
    if tb is str and (ta is int or ta is float):
        return _repeat(b, a)
    if ta is dict and tb is dict:
        return _deep_merge(a, b)
    raise JqError(f"{describe(a)} and {describe(b)} cannot be multiplied")


def div(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        if b == 0:
            raise JqError(f"{describe(a)} and {describe(b)} cannot be divided because the divisor is zero")
        if ta is int and tb is int and -MAX_EXACT <= a <= MAX_EXACT and a % b == 0:
            return a // b
        return _num(_double(a) / _double(b))
    if ta is str and tb is str:
        return split_string(a, b)
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


def split_string(a: str, sep: str) -> list[str]:
    charge_text(len(a) * 2)
    if a == "":
        return []
    if sep == "":
        return list(a)
    return a.split(sep)
