"""Builtins that map input values to one output value (no filter arguments).

Generated code calls these directly; each raises ``JqError`` with jq's wording on bad input.
"""

from __future__ import annotations

import base64
import calendar
import json
import math
import time
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

import orjson

from .regex import MAX_SUBJECT, compiled
from .runtime import (
    MAX_ARRAY,
    MAX_STRING,
    JqError,
    LimitExceeded,
    charge,
    charge_text,
    compare,
    describe,
    jeq,
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


def tojson(v: Any) -> str:
    """Compact JSON like jq: insertion key order, jq's number text."""
    t = type(v)
    if t is list or t is dict:
        # Bounded before encoding: the text is at most a few characters per unit measured.
        measure(v, MAX_STRING // 8)
    elif t is str:
        charge_text(len(v))
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


def tostring(v: Any) -> str:
    if type(v) is str:
        return v
    return tojson(v)


def fromjson(v: Any) -> Any:
    if type(v) is not str:
        raise JqError(f"{describe(v)} cannot be parsed as JSON")
    charge_text(len(v) * 4)  # parsed values take several times the text's size
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
        raise JqError(f"{v[:40]} (while parsing '{v[:40]}'): {exc}") from None


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


def utf8bytelength(v: Any) -> int:
    if type(v) is not str:
        raise JqError(f"{describe(v)} only strings have UTF-8 byte length")
    charge_text(len(v))
    return len(v.encode("utf-8", "surrogatepass"))


def keys(v: Any) -> list[Any]:
    if type(v) is dict or type(v) is list:
        charge(len(v))
    if type(v) is dict:
        return sorted(v)
    if type(v) is list:
        return list(range(len(v)))
    raise JqError(f"{describe(v)} has no keys")


def keys_unsorted(v: Any) -> list[Any]:
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


def _contains(a: Any, b: Any) -> bool:
    ta = type(a)
    tb = type(b)
    if ta is dict and tb is dict:
        return all(k in a and _contains(a[k], bv) for k, bv in b.items())
    if ta is list and tb is list:
        return all(any(_contains(x, y) for x in a) for y in b)
    if ta is str and tb is str:
        return b in a
    return jeq(a, b)


def contains(a: Any, b: Any) -> bool:
    ta = type(a)
    tb = type(b)
    if (ta is dict and tb is dict) or (ta is list and tb is list):
        charge(measure(a) * measure(b) // 64)  # every part of b may be compared with every part of a
        return _contains(a, b)
    if ta is str and tb is str:
        return b in a
    if ta is tb or ((ta is int or ta is float) and (tb is int or tb is float)):
        return jeq(a, b)
    if (ta is bool and tb is bool) or (a is None and b is None):
        return jeq(a, b)
    raise JqError(f"{describe(a)} and {describe(b)} cannot have their containment checked")


def jtype(v: Any) -> str:
    return type_name(v)


# --- collections -----------------------------------------------------------------


def to_entries(v: Any) -> list[dict[str, Any]]:
    if type(v) is dict or type(v) is list:
        charge(2 * len(v))
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


def from_entries(v: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    items = iter_values(v)
    charge(len(items))
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


def add_all(v: Any) -> Any:
    from .runtime import add

    items = iter_values(v)
    charge(len(items))
    acc: Any = None
    first = True
    for x in items:
        if first:
            acc = x
            first = False
        else:
            acc = add(acc, x)
    return acc


def add_values(items: list[Any]) -> Any:
    from .runtime import add

    charge(len(items))
    acc: Any = None
    for x in items:
        acc = add(acc, x)
    return acc


def jany(v: Any) -> bool:
    return any(x is not None and x is not False for x in iter_values(v))


def jall(v: Any) -> bool:
    return all(x is not None and x is not False for x in iter_values(v))


def flatten(v: Any, depth: Any = 1e9) -> list[Any]:
    if type(depth) not in (int, float):
        raise JqError("flatten depth must not be negative")
    if depth < 0:
        raise JqError("flatten depth must not be negative")
    if type(v) is not list:
        raise JqError(f"Cannot iterate over {describe(v)}")
    measure(v)  # the flat list has at most as many elements as the value has nodes
    out: list[Any] = []

    def go(xs: list[Any], d: float) -> None:
        for x in xs:
            if type(x) is list and d > 0:
                go(x, d - 1)
            else:
                out.append(x)

    go(v, depth)
    return out


def jsort(v: Any) -> list[Any]:
    if type(v) is not list:
        raise JqError(f"{describe(v)} cannot be sorted, as it is not an array")
    return sort_values(v)


def unique(v: Any) -> list[Any]:
    s = jsort(v)
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


def sort_by_keys(v: Any, keys: list[Any]) -> list[Any]:
    pairs = _keyed(v, keys, "sort")
    order = sort_values([[k, i] for i, (k, _) in enumerate(pairs)])
    return [pairs[i][1] for _, i in order]


def group_by_keys(v: Any, keys: list[Any]) -> list[list[Any]]:
    pairs = _keyed(v, keys, "group")
    order = sort_values([[k, i] for i, (k, _) in enumerate(pairs)])
    out: list[list[Any]] = []
    last: Any = None
    for n, (k, i) in enumerate(order):
        if n == 0 or compare(last, k) != 0:
            out.append([])
            last = k
        out[-1].append(pairs[i][1])
    return out


def unique_by_keys(v: Any, keys: list[Any]) -> list[Any]:
    return [g[0] for g in group_by_keys(v, keys)]


def min_by_keys(v: Any, keys: list[Any]) -> Any:
    pairs = _keyed(v, keys, "min")
    best: Any = None
    for i, (k, x) in enumerate(pairs):
        if i == 0 or compare(k, best[0]) < 0:
            best = (k, x)
    return None if best is None else best[1]


def max_by_keys(v: Any, keys: list[Any]) -> Any:
    pairs = _keyed(v, keys, "max")
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


def jmin(v: Any) -> Any:
    # Plain ints (never bools) order numerically and equal ones are interchangeable: builtin min.
    if type(v) is list and v and _all_ints(v):
        return min(v)
    return min_by_keys(v, list(v) if type(v) is list else [])


def jmax(v: Any) -> Any:
    if type(v) is list and v and _all_ints(v):
        return max(v)
    return max_by_keys(v, list(v) if type(v) is list else [])


def reverse(v: Any) -> Any:
    if v is None:
        return []
    if type(v) is list:
        return v[::-1]
    if type(v) is str:
        return v[::-1]
    raise JqError(f"Cannot reverse {describe(v)}")


def transpose(v: Any) -> list[Any]:
    rows = iter_values(v)
    width = max((len(r) for r in rows if type(r) is list), default=0)
    if width * len(rows) > MAX_ARRAY:
        raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
    charge(width * len(rows) + len(rows))
    return [[r[i] if type(r) is list and i < len(r) else None for r in rows] for i in range(width)]


# --- strings -------------------------------------------------------------------------


def _need_str(v: Any, what: str) -> str:
    if type(v) is not str:
        raise JqError(f"{describe(v)} {what}")
    return v


def startswith(v: Any, s: Any) -> bool:
    if type(v) is not str or type(s) is not str:
        raise JqError("startswith() requires string inputs")
    return v.startswith(s)


def endswith(v: Any, s: Any) -> bool:
    if type(v) is not str or type(s) is not str:
        raise JqError("endswith() requires string inputs")
    return v.endswith(s)


def ltrimstr(v: Any, s: Any) -> Any:
    if type(v) is not str or type(s) is not str:
        raise JqError("startswith() requires string inputs")
    return v[len(s) :] if v.startswith(s) else v


def rtrimstr(v: Any, s: Any) -> Any:
    if type(v) is not str or type(s) is not str:
        raise JqError("endswith() requires string inputs")
    return v[: len(v) - len(s)] if s and v.endswith(s) else v


def trim(v: Any) -> str:
    if type(v) is not str:
        raise JqError("trim input must be a string")
    return v.strip(" \t\n\r\f\v")


def ltrim(v: Any) -> str:
    if type(v) is not str:
        raise JqError("trim input must be a string")
    return v.lstrip(" \t\n\r\f\v")


def rtrim(v: Any) -> str:
    if type(v) is not str:
        raise JqError("trim input must be a string")
    return v.rstrip(" \t\n\r\f\v")


def ascii_downcase(v: Any) -> str:
    s = _need_str(v, "cannot be ascii_downcased")
    charge_text(len(s))
    return s.translate(_LOWER) if not s.isascii() else s.lower()


def ascii_upcase(v: Any) -> str:
    s = _need_str(v, "cannot be ascii_upcased")
    charge_text(len(s))
    return s.translate(_UPPER) if not s.isascii() else s.upper()


_LOWER = {c: c + 32 for c in range(65, 91)}
_UPPER = {c: c - 32 for c in range(97, 123)}


def explode(v: Any) -> list[int]:
    s = _need_str(v, "cannot be exploded")
    if len(s) > MAX_ARRAY:
        raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
    charge(len(s))
    return [ord(c) for c in s]


def implode(v: Any) -> str:
    if type(v) is not list:
        raise JqError("implode input must be an array")
    charge(len(v))
    out = []
    for c in v:
        if type(c) not in (int, float):
            raise JqError("Unicode codepoint must be numeric")
        n = int(c)
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


def split1(v: Any, sep: Any) -> list[str]:
    if type(v) is not str or type(sep) is not str:
        raise JqError("split input and separator must be strings")
    charge_text(len(v) * 2)
    if v == "":
        return []
    if sep == "":
        return list(v)
    return v.split(sep)


def join(v: Any, sep: Any) -> str:
    parts: list[str] = []
    total = 0
    items = iter_values(v)
    charge(len(items))
    for x in items:
        t = type(x)
        if x is None:
            s = ""
        elif t is str:
            s = x
        elif t is int or t is float or t is bool:
            s = tojson(x)
        else:
            raise JqError(f"string ({tojson(sep)[:37]}) and {describe(x)} cannot be added")
        parts.append(s)
        total += len(s) + (len(sep) if type(sep) is str else 0)
        if total > MAX_STRING:
            charge_text(total)
    if type(sep) is not str:
        if not parts:
            return ""
        raise JqError(f"{describe(sep)} and string cannot be added")
    charge_text(total)
    return sep.join(parts)


def index_of(v: Any, x: Any) -> Any:
    from .runtime import indices_of

    r = indices_of(v, x)
    return r[0] if r else None


def rindex_of(v: Any, x: Any) -> Any:
    from .runtime import indices_of

    r = indices_of(v, x)
    return r[-1] if r else None


# --- regex -------------------------------------------------------------------------


def _regex(v: Any, pattern: Any, flags: Any) -> tuple[Any, bool, bool]:
    if type(v) is not str:
        raise JqError(f"{describe(v)} cannot be matched, as it is not a string")
    if type(pattern) is not str:
        raise JqError(f"{describe(pattern)} cannot be matched, as it is not a string")
    if flags is not None and type(flags) is not str:
        raise JqError(f"{describe(flags)} is not a string")
    if len(v) > MAX_SUBJECT:
        raise LimitExceeded(f"regular expression subject longer than {MAX_SUBJECT} characters")
    charge_text(len(v) * 4)  # RE2 is linear in the subject; matches and captures are built too
    rx, glob, skip_empty, problem = compiled(pattern, flags or "")
    if problem is not None:
        raise LimitExceeded(problem)
    return rx, glob, skip_empty


def _match_obj(m: Any) -> dict[str, Any]:
    names = {i: n for n, i in m.re.groupindex.items()}
    caps = []
    for i in range(1, (m.re.groups or 0) + 1):
        s = m.group(i)
        caps.append(
            {
                "offset": m.start(i) if s is not None else -1,
                "length": len(s) if s is not None else 0,
                "string": s,
                "name": names.get(i),
            }
        )
    return {"offset": m.start(), "length": m.end() - m.start(), "string": m.group(0), "captures": caps}


def match_list(v: Any, pattern: Any, flags: Any = None, force_global: bool = False) -> list[dict[str, Any]]:
    rx, glob, skip_empty = _regex(v, pattern, flags)
    if glob or force_global:
        out = []
        for m in rx.finditer(v):
            if skip_empty and m.end() == m.start():
                continue
            out.append(_match_obj(m))
        return out
    m = rx.search(v)
    if m is None or (skip_empty and m.end() == m.start()):
        return []
    return [_match_obj(m)]


def test(v: Any, pattern: Any, flags: Any = None) -> bool:
    rx, _, _ = _regex(v, pattern, flags)
    return rx.search(v) is not None


def capture_obj(m: dict[str, Any]) -> dict[str, Any]:
    return {c["name"]: c["string"] for c in m["captures"] if c["name"] is not None}


def scan_value(m: dict[str, Any]) -> Any:
    if m["captures"]:
        return [c["string"] for c in m["captures"]]
    return m["string"]


def split_re(v: Any, pattern: Any, flags: Any = None) -> list[str]:
    rx, _, _ = _regex(v, pattern, flags)
    out = []
    prev = 0
    for m in rx.finditer(v):
        if m.end() == m.start() and m.start() in (0, len(v)):
            continue
        out.append(v[prev : m.start()])
        prev = m.end()
    out.append(v[prev:])
    return out


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


def trimstr(v: Any, s: Any) -> Any:
    return rtrimstr(ltrimstr(v, s), s)


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
    try:
        return _intish(math.ldexp(x, int(e)))
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


def tostream(v: Any) -> list[list[Any]]:
    """jq's ``tostream``: [path, leaf] events in document order, and [path] after each
    non-empty container's last child."""
    measure(v)
    out: list[list[Any]] = []

    def walk(x: Any, path: list[Any]) -> None:
        charge(len(path) + 1)  # each event copies its path
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


def bsearch(v: Any, target: Any) -> int:
    if type(v) is not list:
        raise JqError(f"{describe(v)} cannot be searched from")
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


def getpath_value(v: Any, path: Any) -> Any:
    from .paths import getpath

    return getpath(v, path)


def setpath_value(v: Any, path: Any, x: Any) -> Any:
    from .paths import setpath

    return setpath(v, path, x)


# --- formats -------------------------------------------------------------------------------


def _csv_item(x: Any) -> str:
    t = type(x)
    if isinstance(x, str):
        return '"' + x.replace('"', '""') + '"'
    if x is None:
        return ""
    if t is bool or t is int or t is float:
        return tojson(x)
    raise JqError(f"{describe(x)} is not valid in a csv row")


def _tsv_item(x: Any) -> str:
    t = type(x)
    if isinstance(x, str):
        return x.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    if x is None:
        return ""
    if t is bool or t is int or t is float:
        return tojson(x)
    raise JqError(f"{describe(x)} is not valid in a tsv row")


def _sh_item(x: Any) -> str:
    t = type(x)
    if isinstance(x, str):
        return "'" + x.replace("'", "'\\''") + "'"
    if t is list or t is dict:
        raise JqError(f"{describe(x)} can not be escaped for shell")
    return tojson(x)


def format_value(name: str, v: Any) -> str:
    text = _format_value(name, v)
    charge_text(len(text))
    return text


def _format_value(name: str, v: Any) -> str:
    if type(v) is list:
        measure(v, MAX_STRING // 8)
    if name == "text":
        return tostring(v)
    if name == "json":
        return tojson(v)
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
    s = tostring(v)
    # html grows a character to six, uri to nine: bounded before the text is built.
    charge_text(len(s) * (9 if name == "uri" else 6 if name == "html" else 2))
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


# --- dates ---------------------------------------------------------------------------------


def _broken_down(t: Any) -> list[Any]:
    if type(t) is not int and type(t) is not float:
        raise JqError("gmtime() requires a number")
    whole = math.floor(t)
    frac = t - whole
    dt = datetime.fromtimestamp(whole, tz=timezone.utc)
    sec: Any = dt.second + frac if frac else dt.second
    return [
        dt.year,
        dt.month - 1,
        dt.day,
        dt.hour,
        dt.minute,
        sec,
        (dt.weekday() + 1) % 7,
        dt.timetuple().tm_yday - 1,
    ]


def gmtime(v: Any) -> list[Any]:
    try:
        return _broken_down(v)
    except (OverflowError, ValueError, OSError):
        raise JqError("gmtime() argument out of range") from None


def mktime(v: Any) -> int:
    if type(v) is not list or len(v) < 6 or not all(type(x) in (int, float) for x in v[:6]):
        raise JqError("mktime requires array of 6 numbers")
    y, mo, d, h, mi, s = (int(x) for x in v[:6])
    return calendar.timegm((y, mo + 1, d, h, mi, s, 0, 0, 0))


def strftime(v: Any, fmt: Any) -> str:
    if type(fmt) is not str:
        raise JqError("strftime/1 requires a string format")
    if type(v) is int or type(v) is float:
        v = gmtime(v)
    if type(v) is not list or len(v) < 6:
        raise JqError("strftime/1 requires parsed datetime inputs")
    y, mo, d, h, mi, s = (int(x) for x in v[:6])
    try:
        return datetime(y, mo + 1, d, h, mi, s, tzinfo=timezone.utc).strftime(fmt)
    except (ValueError, OverflowError):
        raise JqError("strftime/1 requires parsed datetime inputs") from None


def strptime(v: Any, fmt: Any) -> list[Any]:
    if type(v) is not str or type(fmt) is not str:
        raise JqError("strptime/1 requires string inputs and arguments")
    try:
        tm = time.strptime(v, fmt)
    except ValueError:
        raise JqError(f'date "{v}" does not match format "{fmt}"') from None
    return [
        tm.tm_year,
        tm.tm_mon - 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        (tm.tm_wday + 1) % 7,
        tm.tm_yday - 1,
    ]


def fromdateiso8601(v: Any) -> int:
    return mktime(strptime(v, "%Y-%m-%dT%H:%M:%SZ"))


def todateiso8601(v: Any) -> str:
    return strftime(v, "%Y-%m-%dT%H:%M:%SZ")


def now() -> float:
    return time.time()
