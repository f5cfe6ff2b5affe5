"""Builtins that map input values to one output value (no filter arguments).

Generated code calls these directly; each raises ``JqError`` with jq's wording on bad input.
A builtin whose work grows with its input takes the evaluation's meter first and charges it
before the work (its cost rule in ``registry`` says how); constant-work builtins take none.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any
from urllib.parse import quote

import orjson

from .runtime import (
    MAX_ARRAY,
    MAX_STRING,
    STRING_UNIT,
    JqError,
    LimitExceeded,
    Meter,
    charge,
    charge_text,
    compare,
    describe,
    jeq,
    jeq_unmetered,
    measure,
    sort_values,
    type_name,
)

_encode_str = json.encoder.encode_basestring


# --- text forms -------------------------------------------------------------------


def number_text(x: int | float) -> str:
    if type(x) is int:
        if x.bit_length() > 1024:  # beyond any double: printed as jq prints a double
            return "1.7976931348623157e+308" if x > 0 else "-1.7976931348623157e+308"
        return str(x)
    if x != x:
        return "null"
    if x == math.inf:
        return "1.7976931348623157e+308"
    if x == -math.inf:
        return "-1.7976931348623157e+308"
    return repr(x)


def _dump_into(v: Any, out: list[str], depth: int) -> None:
    if depth > 10_000:
        raise LimitExceeded("value is nested too deeply")
    t = type(v)
    if t is str:
        out.append(_encode_str(v))
    elif v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif t is int or t is float:
        out.append(number_text(v))
    elif t is list:
        out.append("[")
        first = True
        for x in v:
            if not first:
                out.append(",")
            first = False
            _dump_into(x, out, depth + 1)
        out.append("]")
    elif t is dict:
        out.append("{")
        first = True
        for k, x in v.items():
            if not first:
                out.append(",")
            first = False
            out.append(_encode_str(k))
            out.append(":")
            _dump_into(x, out, depth + 1)
        out.append("}")
    else:
        raise JqError(f"cannot serialize {type(v).__name__}")


class _Enough(Exception):
    """The bounded dump has written what it was asked for."""


def dump_prefix(v: Any, cap: int) -> str:
    """The first ``cap`` or so characters of ``v``'s compact JSON, ``...`` appended when cut.
    Work is proportional to ``cap``: long strings are cut before encoding, containers are walked
    only as far as the text goes (for error messages, which jq truncates too)."""
    out: list[str] = []
    room = [cap]

    def put(text: str) -> None:
        out.append(text)
        room[0] -= len(text)
        if room[0] < 0:
            raise _Enough

    def go(x: Any, depth: int) -> None:
        if depth > 200:  # deeper than any message shows; Python's stack stays shallow
            put("...")
            raise _Enough
        t = type(x)
        if t is str:
            put(_encode_str(x) if len(x) <= cap else _encode_str(x[: cap + 1])[:-1])
        elif t is list:
            put("[")
            for i, y in enumerate(x):
                if i:
                    put(",")
                go(y, depth + 1)
            put("]")
        elif t is dict:
            put("{")
            for i, (k, y) in enumerate(x.items()):
                if i:
                    put(",")
                put(_encode_str(k) if len(k) <= cap else _encode_str(k[: cap + 1])[:-1])
                put(":")
                go(y, depth + 1)
            put("}")
        else:
            _dump_into(x, out, 0)
            room[0] -= len(out[-1])
            if room[0] < 0:
                raise _Enough

    try:
        go(v, 0)
    except _Enough:
        return "".join(out)[:cap] + "..."
    return "".join(out)


def tojson(meter: Meter, v: Any) -> str:
    """Compact JSON like jq: insertion key order, jq's number text."""
    t = type(v)
    if t is list or t is dict:
        # Bounded before encoding: the text is at most a few characters per unit measured.
        measure(meter, v, MAX_STRING // 8)
    elif t is str:
        charge_text(meter, len(v) * 2)  # escaping may double it
    try:
        # orjson is exact for everything except floats' spelling and non-finite numbers.
        text = orjson.dumps(v).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = None
    # orjson spells floats differently and writes nan/inf as null: only trust it without those.
    if (
        text is not None
        and "." not in text
        and "null" not in text
        and "e" not in text.replace("true", "").replace("false", "")
    ):
        return text
    out: list[str] = []
    _dump_into(v, out, 0)
    return "".join(out)


def tostring(meter: Meter, v: Any) -> str:
    if type(v) is str:
        return v
    return tojson(meter, v)


def fromjson(meter: Meter, v: Any) -> Any:
    if type(v) is not str:
        raise JqError(f"{describe(v)} cannot be parsed as JSON")
    # orjson's working memory is ~12 bytes per UTF-8 byte of text (up to 4 bytes a character)
    charge_text(meter, len(v) * (6 if v.isascii() else 24))
    try:
        return orjson.loads(v)
    except orjson.JSONDecodeError:
        pass
    text = v.strip()
    if text in ("nan", "NaN"):
        return math.nan
    try:
        return json.loads(v)
    except (ValueError, RecursionError) as exc:
        raise JqError(f"{v[:40]} (while parsing '{v[:40]}'): {str(exc)[:200]}") from None


def tonumber(v: Any) -> Any:
    t = type(v)
    if t is int or t is float:
        return v
    if t is str:
        s = v
        if len(s) > 1000:  # longer than any double's text: no 4,300-digit integer parsing
            raise JqError(f"{describe(v)} cannot be parsed as a number")
        if s and s[0] not in " \t\n\r+" and s[-1] not in " \t\n\r" and "_" not in s:
            low = s.lower()
            if not (low.startswith(("0x", "-0x", "inf", "-inf", "nan", "-nan", "infinity"))):
                try:
                    return int(s)
                except ValueError:
                    pass
                try:
                    f = float(s)
                except ValueError:
                    pass
                else:
                    if f.is_integer() and abs(f) < 2**53 and "." not in s:
                        return int(f)
                    return f
        raise JqError(f"{describe(v)} cannot be parsed as a number")
    raise JqError(f"{describe(v)} cannot be parsed as a number")


# --- inspection ---------------------------------------------------------------


def length(v: Any) -> Any:
    t = type(v)
    if t is list or t is dict or t is str:
        return len(v)
    if v is None:
        return 0
    if t is int or t is float:
        return abs(v)
    raise JqError(f"{describe(v)} has no length")


def utf8bytelength(meter: Meter, v: Any) -> int:
    if type(v) is not str:
        raise JqError(f"{describe(v)} only strings have UTF-8 byte length")
    if v.isascii():
        return len(v)
    charge_text(meter, len(v) * 4)  # the encoded copy takes up to four bytes a character
    return len(v.encode("utf-8", "surrogatepass"))


def keys(meter: Meter, v: Any) -> list[Any]:
    if type(v) is dict:
        charge(meter, len(v))  # the list of keys, before sorting it
        return sort_values(meter, list(v))
    if type(v) is list:
        charge(meter, len(v))
        return list(range(len(v)))
    raise JqError(f"{describe(v)} has no keys")


def keys_unsorted(meter: Meter, v: Any) -> list[Any]:
    if type(v) is dict or type(v) is list:
        charge(meter, len(v))
    if type(v) is dict:
        return list(v)
    if type(v) is list:
        return list(range(len(v)))
    raise JqError(f"{describe(v)} has no keys")


def has(v: Any, k: Any) -> bool:
    if type(v) is dict:
        if type(k) is str:
            return k in v
        raise JqError(f"Cannot check whether object has a {type_name(k)} key")
    if type(v) is list:
        if type(k) is int or type(k) is float:
            return bool(0 <= k < len(v))
        raise JqError(f"Cannot check whether array has a {type_name(k)} key")
    raise JqError(f"Cannot check whether {type_name(v)} has a {type_name(k)} key")


def _contains(a: Any, b: Any) -> bool:  # measured by the caller
    ta = type(a)
    tb = type(b)
    if ta is dict and tb is dict:
        return all(k in a and _contains(a[k], bv) for k, bv in b.items())
    if ta is list and tb is list:
        return all(any(_contains(x, y) for x in a) for y in b)
    if ta is str and tb is str:
        return b in a
    return jeq_unmetered(a, b)


def contains(meter: Meter, a: Any, b: Any) -> bool:
    ta = type(a)
    tb = type(b)
    if (ta is dict and tb is dict) or (ta is list and tb is list):
        # every part of b may be compared with every part of a
        charge(meter, measure(meter, a) * measure(meter, b) // 64)
        return _contains(a, b)
    if ta is str and tb is str:
        charge_text(meter, len(a) + len(b))  # a linear search (CPython's two-way for long needles)
        return b in a
    if ta is tb or ((ta is int or ta is float) and (tb is int or tb is float)):
        return jeq(meter, a, b)
    if (ta is bool and tb is bool) or (a is None and b is None):
        return jeq(meter, a, b)
    raise JqError(f"{describe(a)} and {describe(b)} cannot have their containment checked")


def jtype(v: Any) -> str:
    return type_name(v)


# --- collections -----------------------------------------------------------------


def to_entries(meter: Meter, v: Any) -> list[dict[str, Any]]:
    if type(v) is dict or type(v) is list:
        charge(meter, 5 * len(v))  # a small object per entry
    if type(v) is dict:
        return [{"key": k, "value": x} for k, x in v.items()]
    if type(v) is list:
        return [{"key": i, "value": x} for i, x in enumerate(v)]
    raise JqError(f"{describe(v)} has no keys")


def _entry_key(e: Any) -> Any:
    if type(e) is not dict:
        raise JqError(f'Cannot index {type_name(e)} with "key"')
    # libjq 1.8: `.key // .Key // .name // .Name // .K` (false/null fall through)
    for name in ("key", "Key", "name", "Name", "K"):
        k = e.get(name)
        if k is not None and k is not False:
            return k
    return None


def from_entries(meter: Meter, v: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    items = iter_values(v)
    charge(meter, 6 * len(items))  # a call per entry that tries up to five key names
    for e in items:
        key = _entry_key(e)
        if type(key) is not str:
            raise JqError(f"Cannot use {describe(key)} as object key")
        out[key] = e["value"] if "value" in e else e.get("Value")
    return out


def iter_values(v: Any) -> Any:
    if type(v) is list:
        return v
    if type(v) is dict:
        return v.values()
    raise JqError(f"Cannot iterate over {describe(v)}")


def add_all(meter: Meter, v: Any) -> Any:
    items = iter_values(v)
    charge(meter, 2 * len(items))  # a Python step per item (a call for most)
    return _sum(meter, items)


def add_values(meter: Meter, items: list[Any]) -> Any:
    charge(meter, 2 * len(items))
    return _sum(meter, items)


def _sum(meter: Meter, items: Any) -> Any:
    """jq's ``add`` (``reduce .[] as $x (null; . + $x)``) with runs of strings, arrays or objects
    joined once: adding them pairwise would copy the growing accumulator at every step."""
    from .runtime import add

    acc: Any = None
    first = True
    run: list[Any] = []  # consecutive strings, arrays or objects (with acc first)
    for x in items:
        if first:
            acc = x
            first = False
            continue
        tx = type(x)
        if run:
            if tx is type(run[0]):
                run.append(x)
                continue
            acc = _join_run(meter, run)
            run = []
        if (tx is str or tx is list or tx is dict) and type(acc) is tx:
            run = [acc, x]
            continue
        acc = add(meter, acc, x)
    return _join_run(meter, run) if run else acc


def _join_run(meter: Meter, run: list[Any]) -> Any:
    total = sum(map(len, run))
    if type(run[0]) is str:
        charge_text(meter, total)
        return "".join(run)
    charge(meter, total)
    if type(run[0]) is dict:
        merged: dict[str, Any] = {}
        for part in run:
            merged.update(part)
        return merged
    if total > MAX_ARRAY:
        raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
    out: list[Any] = []
    for part in run:
        out.extend(part)
    return out


def jany(meter: Meter, v: Any) -> bool:
    items = iter_values(v)
    charge(meter, len(items) // 4)
    return any(x is not None and x is not False for x in items)


def jall(meter: Meter, v: Any) -> bool:
    items = iter_values(v)
    charge(meter, len(items) // 4)
    return all(x is not None and x is not False for x in items)


def flatten(meter: Meter, v: Any, depth: Any = 1e9) -> list[Any]:
    if type(depth) not in (int, float):
        raise JqError("flatten depth must not be negative")
    if depth < 0:
        raise JqError("flatten depth must not be negative")
    if type(v) is not list:
        raise JqError(f"Cannot iterate over {describe(v)}")
    measure(meter, v)  # the flat list has at most as many elements as the value has nodes
    out: list[Any] = []

    def go(xs: list[Any], d: float) -> None:
        for x in xs:
            if type(x) is list and d > 0:
                go(x, d - 1)
            else:
                out.append(x)

    go(v, depth)
    return out


def jsort(meter: Meter, v: Any) -> list[Any]:
    if type(v) is not list:
        raise JqError(f"{describe(v)} cannot be sorted, as it is not an array")
    return sort_values(meter, v)


def unique(meter: Meter, v: Any) -> list[Any]:
    s = jsort(meter, v)
    out: list[Any] = []
    for x in s:
        if not out or compare(out[-1], x) != 0:
            out.append(x)
    return out


def _keyed(v: Any, keys: list[Any], what: str) -> list[tuple[Any, Any]]:
    if type(v) is not list:
        raise JqError(
            f"Cannot index {type_name(v)} with number" if what else f"{describe(v)} cannot be sorted"
        )
    return list(zip(keys, v, strict=False))


def sort_by_keys(meter: Meter, v: Any, keys: list[Any]) -> list[Any]:
    pairs = _keyed(v, keys, "sort")
    charge(meter, 3 * len(pairs))
    order = sort_values(meter, [[k, i] for i, (k, _) in enumerate(pairs)])
    return [pairs[i][1] for _, i in order]


def group_by_keys(meter: Meter, v: Any, keys: list[Any]) -> list[list[Any]]:
    pairs = _keyed(v, keys, "group")
    charge(meter, 3 * len(pairs))
    order = sort_values(meter, [[k, i] for i, (k, _) in enumerate(pairs)])
    out: list[list[Any]] = []
    last: Any = None
    for n, (k, i) in enumerate(order):
        if n == 0 or compare(last, k) != 0:
            out.append([])
            last = k
        out[-1].append(pairs[i][1])
    return out


def unique_by_keys(meter: Meter, v: Any, keys: list[Any]) -> list[Any]:
    return [g[0] for g in group_by_keys(meter, v, keys)]


def min_by_keys(meter: Meter, v: Any, keys: list[Any]) -> Any:
    pairs = _keyed(v, keys, "min")
    charge(meter, len(pairs) + measure(meter, keys))  # every key compared once
    best: Any = None
    for i, (k, x) in enumerate(pairs):
        if i == 0 or compare(k, best[0]) < 0:
            best = (k, x)
    return None if best is None else best[1]


def max_by_keys(meter: Meter, v: Any, keys: list[Any]) -> Any:
    pairs = _keyed(v, keys, "max")
    charge(meter, len(pairs) + measure(meter, keys))  # every key compared once
    best: Any = None
    for i, (k, x) in enumerate(pairs):
        if i == 0 or compare(k, best[0]) >= 0:
            best = (k, x)
    return None if best is None else best[1]


def _all_ints(v: list[Any]) -> bool:
    for x in v:  # noqa: SIM110 (a plain loop is faster than all() over a generator here)
        if type(x) is not int:
            return False
    return True


def jmin(meter: Meter, v: Any) -> Any:
    # Plain ints (never bools) order numerically and equal ones are interchangeable: builtin min.
    if type(v) is list and v:
        charge(meter, len(v))
        if _all_ints(v):
            return min(v)
    return min_by_keys(meter, v, list(v) if type(v) is list else [])


def jmax(meter: Meter, v: Any) -> Any:
    if type(v) is list and v:
        charge(meter, len(v))
        if _all_ints(v):
            return max(v)
    return max_by_keys(meter, v, list(v) if type(v) is list else [])


def reverse(meter: Meter, v: Any) -> Any:
    if v is None:
        return []
    if type(v) is list:
        charge(meter, len(v))
        return v[::-1]
    if type(v) is str:
        charge_text(meter, len(v))
        return v[::-1]
    raise JqError(f"Cannot reverse {describe(v)}")


def transpose(meter: Meter, v: Any) -> list[Any]:
    rows = iter_values(v)
    charge(meter, len(rows))
    width = max((len(r) for r in rows if type(r) is list), default=0)
    if width * len(rows) > MAX_ARRAY:
        raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
    charge(meter, width * len(rows) + 2 * width)
    return [[r[i] if type(r) is list and i < len(r) else None for r in rows] for i in range(width)]


# --- strings -------------------------------------------------------------------------


def _need_str(v: Any, what: str) -> str:
    if type(v) is not str:
        raise JqError(f"{describe(v)} {what}")
    return v


def startswith(meter: Meter, v: Any, s: Any) -> bool:
    if type(v) is not str or type(s) is not str:
        raise JqError("startswith() requires string inputs")
    if len(s) > STRING_UNIT and len(s) <= len(v):
        charge_text(meter, len(s))
    return v.startswith(s)


def endswith(meter: Meter, v: Any, s: Any) -> bool:
    if type(v) is not str or type(s) is not str:
        raise JqError("endswith() requires string inputs")
    if len(s) > STRING_UNIT and len(s) <= len(v):
        charge_text(meter, len(s))
    return v.endswith(s)


def ltrimstr(meter: Meter, v: Any, s: Any) -> Any:
    if type(v) is not str or type(s) is not str:
        raise JqError("startswith() requires string inputs")
    if not startswith(meter, v, s):
        return v
    charge_text(meter, len(v) - len(s))  # the copy
    return v[len(s) :]


def rtrimstr(meter: Meter, v: Any, s: Any) -> Any:
    if type(v) is not str or type(s) is not str:
        raise JqError("endswith() requires string inputs")
    if not s or not endswith(meter, v, s):
        return v
    charge_text(meter, len(v) - len(s))  # the copy
    return v[: len(v) - len(s)]


_SPACE = " \t\n\r\f\v"


def trim(meter: Meter, v: Any) -> str:
    if type(v) is not str:
        raise JqError("trim input must be a string")
    charge_text(meter, len(v))  # scans and copies
    return v.strip(_SPACE)


def ltrim(meter: Meter, v: Any) -> str:
    if type(v) is not str:
        raise JqError("trim input must be a string")
    charge_text(meter, len(v))
    return v.lstrip(_SPACE)


def rtrim(meter: Meter, v: Any) -> str:
    if type(v) is not str:
        raise JqError("trim input must be a string")
    charge_text(meter, len(v))
    return v.rstrip(_SPACE)


def ascii_downcase(meter: Meter, v: Any) -> str:
    s = _need_str(v, "cannot be ascii_downcased")
    if s.isascii():
        charge_text(meter, len(s))
        return s.lower()
    return _ascii_translate(meter, s, _LOWER)


def ascii_upcase(meter: Meter, v: Any) -> str:
    s = _need_str(v, "cannot be ascii_upcased")
    if s.isascii():
        charge_text(meter, len(s))
        return s.upper()
    return _ascii_translate(meter, s, _UPPER)


def _ascii_translate(meter: Meter, s: str, table: bytes) -> str:
    """Only ASCII letters change, and in UTF-8 they are single bytes: translated as bytes (in C;
    str.translate looks every character up in a dict)."""
    charge_text(meter, len(s) * 12)  # encode, translate, decode: up to 4 bytes a character each
    return s.encode("utf-8", "surrogatepass").translate(table).decode("utf-8", "surrogatepass")


_LOWER = bytes(c + 32 if 65 <= c <= 90 else c for c in range(256))
_UPPER = bytes(c - 32 if 97 <= c <= 122 else c for c in range(256))


def explode(meter: Meter, v: Any) -> list[int]:
    s = _need_str(v, "cannot be exploded")
    if len(s) > MAX_ARRAY:
        raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
    charge(meter, len(s))
    return [ord(c) for c in s]


def implode(meter: Meter, v: Any) -> str:
    if type(v) is not list:
        raise JqError("implode input must be an array")
    charge(meter, 4 * len(v))  # a Python step per code point
    out = []
    for c in v:
        if type(c) not in (int, float) or c != c:
            raise JqError(f"{describe(c)} can't be imploded, unicode codepoint needs to be numeric")
        n = int(c) if -0x110000 < c < 0x110000 else -1
        if n < 0 or n > 0x10FFFF or 0xD800 <= n < 0xE000:
            n = 0xFFFD
        out.append(chr(n))
    return "".join(out)


def ascii(v: Any) -> str:
    if type(v) is not int:
        raise JqError(f"{describe(v)} is not a codepoint")
    if not 0 <= v <= 0x10FFFF:
        raise JqError(f"{describe(v)} is not a valid codepoint")
    return chr(v)


def split1(meter: Meter, v: Any, sep: Any) -> list[str]:
    from .runtime import split_string

    if type(v) is not str or type(sep) is not str:
        raise JqError("split input and separator must be strings")
    return split_string(meter, v, sep)


def join(meter: Meter, v: Any, sep: Any) -> str:
    parts: list[str] = []
    total = 0
    items = iter_values(v)
    charge(meter, len(items))
    for x in items:
        t = type(x)
        if x is None:
            s = ""
        elif t is str:
            s = x
        elif t is int or t is float or t is bool:
            s = tojson(meter, x)
        else:
            raise JqError(f"string ({dump_prefix(sep, 40)[:37]}) and {describe(x)} cannot be added")
        parts.append(s)
        total += len(s) + (len(sep) if type(sep) is str else 0)
        if total > MAX_STRING:
            charge_text(meter, total)
    if type(sep) is not str:
        if not parts:
            return ""
        raise JqError(f"{describe(sep)} and string cannot be added")
    charge_text(meter, total)
    return sep.join(parts)


def index_of(meter: Meter, v: Any, x: Any) -> Any:
    """jq's ``index``: ``indices(x) | .[0]``; for two strings, one search for the first."""
    from .runtime import index, indices_of

    if type(v) is str and type(x) is str:
        if not x:
            return None
        charge_text(meter, len(v) + len(x))
        i = v.find(x)
        return i if i >= 0 else None
    return index(meter, indices_of(meter, v, x), 0)


def rindex_of(meter: Meter, v: Any, x: Any) -> Any:
    """jq's ``rindex``: ``indices(x) | .[-1:][0]``; for two strings, one search for the last."""
    from .runtime import index, indices_of, slice_value

    if type(v) is str and type(x) is str:
        if not x:
            return None
        charge_text(meter, len(v) + len(x))
        i = v.rfind(x)
        return i if i >= 0 else None
    return index(meter, slice_value(meter, indices_of(meter, v, x), -1, None), 0)


# --- math ------------------------------------------------------------------------------


def _need_num(v: Any, name: str) -> float:
    if type(v) is not int and type(v) is not float:
        raise JqError(f"{describe(v)} number required")
    return v


def _intish(r: float) -> Any:
    if r == r and r not in (math.inf, -math.inf) and r.is_integer() and abs(r) < 2**53:
        return int(r)
    return r


def floor(v: Any) -> Any:
    x = _need_num(v, "floor")
    return x if type(x) is int else _intish(float(math.floor(x)) if math.isfinite(x) else x)


def ceil(v: Any) -> Any:
    x = _need_num(v, "ceil")
    return x if type(x) is int else _intish(float(math.ceil(x)) if math.isfinite(x) else x)


def jround(v: Any) -> Any:
    x = _need_num(v, "round")
    if type(x) is int or not math.isfinite(x):
        return x
    return _intish(float(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1))


def trunc(v: Any) -> Any:
    x = _need_num(v, "trunc")
    return x if type(x) is int or not math.isfinite(x) else _intish(float(math.trunc(x)))


def fabs(v: Any) -> Any:
    x = _need_num(v, "fabs")
    return abs(x) if type(x) is int else math.fabs(x)


def jabs(v: Any) -> Any:
    """jq 1.8: ``if type == "number" and . < 0 then -. else . end`` for numbers; other values
    below 0 in jq's order (null, booleans) cannot be negated, the rest pass through."""
    if type(v) is int or type(v) is float:
        return -v if v < 0 else v
    if v is None or type(v) is bool:
        raise JqError(f"{describe(v)} cannot be negated")
    return v


def trimstr(meter: Meter, v: Any, s: Any) -> Any:
    return rtrimstr(meter, ltrimstr(meter, v, s), s)


def significand(v: Any) -> Any:
    x = _need_num(v, "significand")
    if x == 0 or not math.isfinite(x):
        return x
    m, _e = math.frexp(x)
    return _intish(m * 2)


def frexp(v: Any) -> list[Any]:
    x = _need_num(v, "frexp")
    if not math.isfinite(x):
        return [x, 0]
    m, e = math.frexp(x)
    return [_intish(m), e]


def ldexp(v: Any, a: Any, b: Any) -> Any:
    x = _need_num(a, "ldexp")
    e = _need_num(b, "ldexp")
    # C's (int) cast: nan and values outside an int become INT_MIN (libjq: ldexp(1; nan) is 0)
    exponent = int(e) if e == e and -(2**31) <= e < 2**31 else -(2**31)
    try:
        return _intish(math.ldexp(x, exponent))
    except OverflowError:
        return math.copysign(math.inf, x)


def lgamma(v: Any) -> Any:
    x = _need_num(v, "lgamma")
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


def tgamma(v: Any) -> Any:
    x = _need_num(v, "tgamma")
    try:
        return _intish(math.gamma(x))
    except OverflowError:
        return math.inf
    except ValueError:
        return math.inf if x == 0 else math.nan


def tostream(meter: Meter, v: Any) -> list[list[Any]]:
    """jq's ``tostream``: [path, leaf] events in document order, and [path] after each
    non-empty container's last child."""
    measure(meter, v)
    out: list[list[Any]] = []

    def walk(x: Any, path: list[Any]) -> None:
        charge(meter, len(path) + 3)  # each event copies its path
        if type(x) is dict and x:
            items: Any = x.items()
        elif type(x) is list and x:
            items = enumerate(x)
        else:
            out.append([path, x])
            return
        last: Any = None
        for key, child in items:
            walk(child, [*path, key])
            last = key
        out.append([[*path, last]])

    walk(v, [])
    return out


def _float_fn(fn: Any, v: Any) -> Any:
    x = _need_num(v, "math")
    try:
        return _intish(fn(x))
    except (ValueError, OverflowError):
        return math.nan if not isinstance(fn, type) else math.inf


def sqrt(v: Any) -> Any:
    x = _need_num(v, "sqrt")
    return math.nan if x < 0 else _intish(math.sqrt(x))


def log(v: Any) -> Any:
    x = _need_num(v, "log")
    return -math.inf if x == 0 else (math.nan if x < 0 else math.log(x))


def log10(v: Any) -> Any:
    x = _need_num(v, "log10")
    return -math.inf if x == 0 else (math.nan if x < 0 else _intish(math.log10(x)))


def log2(v: Any) -> Any:
    x = _need_num(v, "log2")
    return -math.inf if x == 0 else (math.nan if x < 0 else _intish(math.log2(x)))


def exp(v: Any) -> Any:
    x = _need_num(v, "exp")
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def exp2(v: Any) -> Any:
    x = _need_num(v, "exp2")
    try:
        return _intish(2.0**x)
    except OverflowError:
        return math.inf


def exp10(v: Any) -> Any:
    x = _need_num(v, "exp10")
    try:
        return _intish(10.0**x)
    except OverflowError:
        return math.inf


def pow_(_inp: Any, a: Any, b: Any) -> Any:
    x = _need_num(a, "pow")
    y = _need_num(b, "pow")
    try:
        r = math.pow(x, y)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan
    return _intish(r)


def isinfinite(v: Any) -> bool:
    x = _need_num(v, "isinfinite")
    return x in (math.inf, -math.inf)


def isnan(v: Any) -> bool:
    x = _need_num(v, "isnan")
    return x != x


def isnormal(v: Any) -> bool:
    x = _need_num(v, "isnormal")
    return bool(math.isfinite(x) and x != 0 and abs(x) >= 2.2250738585072014e-308)


def toarray(v: Any) -> list[Any]:
    return v if type(v) is list else [v]


def bsearch(meter: Meter, v: Any, target: Any) -> int:
    if type(v) is not list:
        raise JqError(f"{describe(v)} cannot be searched from")
    # log n comparisons, each as deep as the target
    charge(meter, len(v).bit_length() * measure(meter, target))
    lo, hi = 0, len(v) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        c = compare(v[mid], target)
        if c == 0:
            return mid
        if c < 0:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1 - lo


# --- formats -------------------------------------------------------------------------------


def _csv_item(x: Any) -> str:
    t = type(x)
    if isinstance(x, str):
        return '"' + x.replace('"', '""') + '"'
    if x is None:
        return ""
    if t is bool or t is int or t is float:
        return _scalar_text(x)
    raise JqError(f"{describe(x)} is not valid in a csv row")


def _tsv_item(x: Any) -> str:
    t = type(x)
    if isinstance(x, str):
        return x.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    if x is None:
        return ""
    if t is bool or t is int or t is float:
        return _scalar_text(x)
    raise JqError(f"{describe(x)} is not valid in a tsv row")


def _sh_item(x: Any) -> str:
    t = type(x)
    if isinstance(x, str):
        return "'" + x.replace("'", "'\\''") + "'"
    if t is list or t is dict:
        raise JqError(f"{describe(x)} can not be escaped for shell")
    return _scalar_text(x)


def _scalar_text(x: Any) -> str:
    """A scalar's JSON text (numbers as jq prints them), uncharged: it is a few characters."""
    if x is None:
        return "null"
    if x is True:
        return "true"
    if x is False:
        return "false"
    return number_text(x)


def format_value(meter: Meter, name: str, v: Any) -> str:
    text = _format_value(meter, name, v)
    charge_text(meter, len(text))
    return text


# How much longer a format's text can be than its input's (@sh: ' becomes '\'' ; @csv: " is
# doubled; @tsv: one character becomes two), charged before the text is built.
_GROWTH = {"csv": 2, "tsv": 2, "sh": 4}


def _format_value(meter: Meter, name: str, v: Any) -> str:
    if name == "text":
        return tostring(meter, v)
    if name == "json":
        return tojson(meter, v)
    if name in _GROWTH:
        if type(v) is list:
            # the row's text: a few characters per unit measured (quotes and separators included)
            charge(meter, _GROWTH[name] * 2 * measure(meter, v, MAX_STRING // 8))
        elif type(v) is str:
            charge_text(meter, len(v) * _GROWTH[name] + 2)
    if name == "csv" or name == "tsv":
        if type(v) is not list:
            raise JqError(f"{describe(v)} cannot be {name}-formatted, only an array can be")
        if name == "csv":
            return ",".join(_csv_item(x) for x in v)
        return "\t".join(_tsv_item(x) for x in v)
    if name == "sh":
        if type(v) is list:
            return " ".join(_sh_item(x) for x in v)
        return _sh_item(v)
    s = tostring(meter, v)
    # html grows a character to six, uri to nine (twelve for a character of four UTF-8 bytes),
    # base64 to 4/3 of its UTF-8 bytes: bounded before the text is built.
    wide = not s.isascii()
    growth = {"uri": 12 if wide else 9, "html": 6, "base64": 6 if wide else 2}.get(name, 2)
    charge_text(meter, len(s) * growth)
    if name == "html":
        return (
            s.replace("&", "&amp;")
            .replace("<", "&lt;")
            .replace(">", "&gt;")
            .replace("'", "&apos;")
            .replace('"', "&quot;")
        )
    if name == "uri":
        return quote(s, safe="-_.~")
    if name == "base64":
        return base64.b64encode(s.encode("utf-8", "surrogatepass")).decode("ascii")
    if name == "base64d":
        raw = s.encode("utf-8", "surrogatepass").rstrip(b"=")
        if len(raw) % 4 == 1:
            raise JqError(f"{describe(v)} trailing base64 byte found")
        try:
            data = base64.b64decode(raw + b"=" * (-len(raw) % 4))
        except ValueError:
            raise JqError(f"{describe(v)} is not valid base64 data") from None
        return data.decode("utf-8", "replace")
    raise JqError(f"{name} is not a valid format")
