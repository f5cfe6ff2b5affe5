"""Plain-data jq path helpers for the write-back code: :func:`getpath` and :func:`setpath` only
ever raise :class:`~workload_map.errors.PathError` (the engine's own raise its internal error
type). Expressions are compiled once per definition (:mod:`workload_map.resolve.compiled`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workload_map.errors import PathError

Path = tuple[Any, ...]


# --- plain path helpers (Python data, never mutating the input) ------------------------------


def getpath(data: Any, path: Sequence[Any]) -> Any:
    """The value at ``path`` or ``None`` when any step is missing (jq ``getpath``)."""
    cur = data
    for key in path:
        if cur is None:
            return None
        if isinstance(key, str) and isinstance(cur, dict):
            cur = cur.get(key)
        elif isinstance(key, int) and not isinstance(key, bool) and isinstance(cur, list):
            if -len(cur) <= key < len(cur):
                cur = cur[key]
            else:
                return None
        else:
            return None
    return cur


def setpath(data: Any, path: Sequence[Any], value: Any) -> Any:
    """A copy of ``data`` with ``value`` at ``path`` (missing objects/arrays are created, as jq
    does). Only the containers along the path are copied; the rest is shared."""
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(key, str):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise PathError(_path_text(path), f"cannot index {_jq_type(data)} with {key!r}")
        out = dict(data)
        out[key] = setpath(data.get(key), rest, value)
        return out
    if isinstance(key, int) and not isinstance(key, bool):
        if data is None:
            data = []
        if not isinstance(data, list):
            raise PathError(_path_text(path), f"cannot index {_jq_type(data)} with number")
        lst = list(data)
        if key < 0:
            key += len(lst)
            if key < 0:
                raise PathError(_path_text(path), "out of bounds negative array index")
        while len(lst) <= key:
            lst.append(None)
        lst[key] = setpath(lst[key], rest, value)
        return lst
    raise PathError(_path_text(path), f"invalid path component {key!r}")


def _jq_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _path_text(path: Sequence[Any]) -> str:
    return "".join(f"[{p!r}]" for p in path)


__all__ = ["Path", "getpath", "setpath"]
