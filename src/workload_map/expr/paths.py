"""Pure path helpers: ``getpath`` and copy-on-write ``setpath`` with jq semantics.

``setpath`` copies only the containers along the path, so the input is never mutated and
unchanged siblings are shared. Missing intermediates are created like jq does: ``null``
becomes ``{}`` for a string key and ``[]`` for an integer index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .runtime import MAX_ARRAY, JqError, LimitExceeded, describe, index, slice_value, type_name


def _path_items(path: Any) -> Sequence[Any]:
    if type(path) is list or type(path) is tuple:
        return path  # type: ignore[no-any-return, unused-ignore]
    raise JqError("Path must be specified as an array")


def getpath(data: Any, path: Any) -> Any:
    """Value at ``path``; ``null`` when the path runs through a missing key or null."""
    cur = data
    for k in _path_items(path):
        if cur is None:
            return None
        cur = slice_value(cur, k.get("start"), k.get("end")) if type(k) is dict else index(cur, k)
    return cur


def setpath(data: Any, path: Any, value: Any) -> Any:
    """A new value equal to ``data`` with ``value`` at ``path`` (copy-on-write)."""
    items = _path_items(path)
    return _set(data, items, 0, value)


def _set(cur: Any, items: Sequence[Any], i: int, value: Any) -> Any:
    if i == len(items):
        return value
    k = items[i]
    tk = type(k)
    tc = type(cur)
    if tk is str:
        if cur is None:
            return {k: _set(None, items, i + 1, value)}
        if tc is not dict:
            raise JqError(f'Cannot index {type_name(cur)} with "{k}"')
        new = dict(cur)
        new[k] = _set(cur.get(k), items, i + 1, value)
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
        new_list = list(cur)
        if n >= len(new_list):
            new_list.extend([None] * (n + 1 - len(new_list)))
        new_list[n] = _set(cur[n] if n < len(cur) else None, items, i + 1, value)
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
        repl = _set(cur[start:end], items, i + 1, value)
        if type(repl) is not list:
            raise JqError("A slice of an array can only be assigned another array")
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
