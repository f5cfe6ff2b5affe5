"""Pure path helpers: ``getpath`` and copy-on-write ``setpath`` with jq semantics.

``setpath`` copies only the containers along the path, so the input is never mutated and
unchanged siblings are shared. Missing intermediates are created like jq does: ``null``
becomes ``{}`` for a string key and ``[]`` for an integer index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .runtime import (
    MAX_ARRAY,
    JqError,
    LimitExceeded,
    Meter,
    charge,
    describe,
    index,
    slice_value,
    type_name,
    unmetered,
)


def _path_items(path: Any) -> Sequence[Any]:
    if type(path) is list or type(path) is tuple:
        return path  # type: ignore[no-any-return, unused-ignore]
    raise JqError("Path must be specified as an array")


def getpath(data: Any, path: Any) -> Any:
    """Value at ``path``; ``null`` when the path runs through a missing key or null."""
    return getpath_metered(unmetered(), data, path)


def setpath(data: Any, path: Any, value: Any) -> Any:
    """A new value equal to ``data`` with ``value`` at ``path`` (copy-on-write)."""
    return setpath_metered(unmetered(), data, path, value)


def getpath_metered(meter: Meter, data: Any, path: Any) -> Any:
    """``getpath`` inside an evaluation: one unit per path step (and slices by their length)."""
    items = _path_items(path)
    charge(meter, len(items))
    cur = data
    for k in items:
        if cur is None:
            return None
        cur = (
            slice_value(meter, cur, k.get("start"), k.get("end")) if type(k) is dict else index(meter, cur, k)
        )
    return cur


def setpath_metered(meter: Meter, data: Any, path: Any, value: Any) -> Any:
    """``setpath`` inside an evaluation: every container copied along the path is charged by its
    length before the copy (a loop of setpath on a long array copies it each time)."""
    items = _path_items(path)
    charge(meter, len(items))
    return _set(meter, data, items, 0, value)


def _set(meter: Meter, cur: Any, items: Sequence[Any], i: int, value: Any) -> Any:
    if i == len(items):
        return value
    k = items[i]
    tk = type(k)
    tc = type(cur)
    if tk is str:
        if cur is None:
            return {k: _set(meter, None, items, i + 1, value)}
        if tc is not dict:
            raise JqError(f'Cannot index {type_name(cur)} with "{k}"')
        charge(meter, len(cur) + 1)
        new = dict(cur)
        new[k] = _set(meter, cur.get(k), items, i + 1, value)
        return new
    if tk is int or tk is float:
        if cur is None:
            cur = []
            tc = list
        if tc is not list:
            raise JqError(f"Cannot index {type_name(cur)} with number")
        n = int(k)
        if n < 0:
            n += len(cur)
            if n < 0:
                raise JqError("Out of bounds negative array index")
        if n >= MAX_ARRAY:
            raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
        charge(meter, max(n + 1, len(cur)))
        new_list = list(cur)
        if n >= len(new_list):
            new_list.extend([None] * (n + 1 - len(new_list)))
        new_list[n] = _set(meter, cur[n] if n < len(cur) else None, items, i + 1, value)
        return new_list
    if tk is dict:
        if cur is None:
            cur = []
            tc = list
        if tc is not list:
            raise JqError(f"Cannot update field at object index of {type_name(cur)}")
        n = len(cur)
        start = _bound(k.get("start"), n, 0)
        end = _bound(k.get("end"), n, n)
        if end < start:
            end = start
        charge(meter, n)
        repl = _set(meter, cur[start:end], items, i + 1, value)
        if type(repl) is not list:
            raise JqError("A slice of an array can only be assigned another array")
        if n - (end - start) + len(repl) > MAX_ARRAY:
            raise LimitExceeded(f"array length exceeds the allowed {MAX_ARRAY} elements")
        charge(meter, n + len(repl))
        return list(cur[:start]) + repl + list(cur[end:])
    raise JqError(f"Invalid path component {describe(k)}")


def _bound(x: Any, n: int, default: int) -> int:
    if x is None:
        return default
    if type(x) not in (int, float):
        raise JqError("Start and end indices of an array slice must be numbers")
    i = int(x)
    if i < 0:
        i = max(0, n + i)
    return min(i, n)
