"""Helpers called by generated code: errors, budget, truthiness, ordering, indexing, arithmetic.

Everything here is written for the hot path: type checks use ``type(x) is ...`` (so ``bool`` is
never mistaken for ``int``), and common cases return before any general logic.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn

MAX_RESULTS = 1000
STEP_BUDGET = 2_000_000
MAX_STRING = 10_000_000  # characters
MAX_ARRAY = 1_000_000  # elements


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


def over_budget() -> NoReturn:
    raise LimitExceeded(
        f"evaluation exceeded the step budget of {STEP_BUDGET} iterations (possible unbounded loop)"
    )


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
    if ta is str or a is None:
        return bool(a == b)
    tb = type(b)
    if ta is bool or tb is bool:
        return a is b
    if ta is list:
        return tb is list and len(a) == len(b) and all(jeq(x, y) for x, y in zip(a, b, strict=False))
    if ta is dict:
        if tb is not dict or len(a) != len(b):
            return False
        return all(not (k not in b or not jeq(v, b[k])) for k, v in a.items())
    if (ta is int or ta is float) and (tb is int or tb is float):
        return bool(a == b)
    return False


def jne(a: Any, b: Any) -> bool:
    return not jeq(a, b)


def lt(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a < b)
    return compare(a, b) < 0


def le(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a <= b)
    return compare(a, b) <= 0


def gt(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a > b)
    return compare(a, b) > 0


def ge(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return bool(a >= b)
    return compare(a, b) >= 0


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
    t0 = type(items[0])
    if (t0 is str or t0 is int) and all(type(x) is t0 for x in items):
        return sorted(items)
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
            return [i for i in range(len(v) - m + 1) if all(jeq(v[i + j], x[j]) for j in range(m))]
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
        return a + b
    if a is None:
        return b
    if b is None:
        return a
    if (ta is int or ta is float) and (tb is int or tb is float):
        return _num(a + b)
    if ta is str and tb is str:
        if len(a) + len(b) > MAX_STRING:
            check_size(a + b[: MAX_STRING + 1])
        return a + b
    if ta is list and tb is list:
        if len(a) + len(b) > MAX_ARRAY:
            raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
        return a + b
    if ta is dict and tb is dict:
        r = dict(a)
        r.update(b)
        return r
    raise JqError(f"{describe(a)} and {describe(b)} cannot be added")


def sub(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return _num(a - b)
    if ta is list and tb is list:
        return [x for x in a if not any(jeq(x, y) for y in b)]
    raise JqError(f"{describe(a)} and {describe(b)} cannot be subtracted")


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
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
    count = int(n)
    if len(s) * count > MAX_STRING:
        raise LimitExceeded(f"string length exceeds the allowed {MAX_STRING} characters")
    return s * count


def mul(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return _num(a * b)
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
        if ta is int and tb is int and a % b == 0:
            return a // b
        return _num(a / b)
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
    if a == "":
        return []
    if sep == "":
        return list(a)
    return a.split(sep)
