"""The few jq operations the write-back, pod and gang code needs, behind one small seam.

Everything goes through :func:`compile_expr`, which returns an object with the jq engine's
interface (``all``, ``first``, ``is_assignable``, ``paths``, ``assign``, ``set_each``). The
engine is :mod:`workload_map.expr`. While that package is still being written, and only if it
does not provide ``compile_expression`` yet, a stand-in built on the ``jq`` bindings (a
development dependency) is used so these modules can be exercised; it maps every failure to the
library's :class:`~workload_map.errors.ExpressionError` family. Once the engine lands the stand-in
is dead code and can be deleted.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

from workload_map.errors import (
    ExpressionError,
    ExpressionRuntimeError,
    ExpressionSyntaxError,
    PathError,
)

Path = tuple[Any, ...]


class CompiledExpr(Protocol):
    """The part of the engine's compiled expression these modules use."""

    @property
    def is_assignable(self) -> bool: ...

    def all(self, data: Any) -> list[Any]: ...

    def first(self, data: Any) -> Any: ...

    def paths(self, data: Any) -> list[Path]: ...

    def assign(self, data: Any, value: Any) -> Any: ...

    def set_each(self, data: Any, values: Sequence[Any]) -> Any: ...


def _engine_compile() -> Any:
    try:
        from workload_map import expr as engine
    except ImportError:  # pragma: no cover - depends on the engine's progress
        return None
    return getattr(engine, "compile_expression", None)


@lru_cache(maxsize=2048)
def compile_expr(source: str) -> CompiledExpr:
    """Compile (and cache) a jq expression. Raises :class:`ExpressionError` subclasses."""
    engine_compile = _engine_compile()
    if engine_compile is not None:
        compiled: CompiledExpr = engine_compile(source)
        # A partial stand-in (e.g. a test's) may lack the path operations: complete it with ours.
        if hasattr(compiled, "paths") and hasattr(compiled, "is_assignable"):
            return compiled
    return _StandIn(source)  # pragma: no cover - only before the engine lands


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


# --- stand-in until workload_map.expr lands ---------------------------------------------------

# Constructs whose paths are not plain navigation: the engine decides this statically; the
# stand-in approximates it from the text.
_NOT_A_PATH = re.compile(r"//|\bas\s+\$|^\s*\{|\btonumber\b|\btostring\b|\bascii_downcase\b|[*+]")


class _StandIn:  # pragma: no cover - only before the engine lands
    def __init__(self, source: str) -> None:
        import jq  # type: ignore[import-not-found]

        self.source = source
        try:
            self._prog = jq.compile(source)
            self._paths = jq.compile(f"[path({source})]")
            self._assign = jq.compile(f"reduce path({source}) as $p (.; setpath($p; $v))", args={"v": None})
        except ValueError as exc:
            raise ExpressionSyntaxError(source, str(exc)) from None
        self._jq = jq

    @property
    def is_assignable(self) -> bool:
        return _NOT_A_PATH.search(self.source) is None

    def all(self, data: Any, variables: Any = None) -> list[Any]:
        try:
            prog = self._prog
            if variables:
                prog = self._jq.compile(self.source, args=dict(variables))
            return list(prog.input_value(data).all())
        except ValueError as exc:
            raise ExpressionRuntimeError(self.source, str(exc)) from None

    def first(self, data: Any) -> Any:
        results = self.all(data)
        return results[0] if results else None

    def paths(self, data: Any) -> list[Path]:
        if not self.is_assignable:
            raise PathError(self.source, f"invalid path against: {self.source}")
        try:
            found = self._paths.input_value(data).first()
        except ValueError as exc:
            msg = str(exc)
            if "Invalid path expression" in msg:
                raise PathError(self.source, msg) from None
            raise ExpressionRuntimeError(self.source, msg) from None
        return [tuple(p) for p in found]

    def assign(self, data: Any, value: Any) -> Any:
        out = copy.deepcopy(data)
        for p in self.paths(data):
            out = setpath(out, p, copy.deepcopy(value))
        return out

    def set_each(self, data: Any, values: Sequence[Any]) -> Any:
        paths = self.paths(data)
        if len(paths) != len(values):
            raise PathError(
                self.source, f"array length mismatch: expected {len(paths)} values but got {len(values)}"
            )
        out = copy.deepcopy(data)
        for p, v in zip(paths, values, strict=True):
            out = setpath(out, p, copy.deepcopy(v))
        return out


def install_standin_if_missing() -> bool:  # pragma: no cover - only before the engine lands
    """For tests written before ``workload_map.expr`` exists: expose the stand-in as
    ``workload_map.expr.compile_expression`` when the engine does not provide it. Returns whether
    the stand-in was installed. A no-op once the engine lands."""
    if _engine_compile() is not None:
        return False
    from workload_map import expr as engine

    def _compile(source: str) -> _StandIn:
        return _StandIn(source)

    engine.compile_expression = _compile  # type: ignore[attr-defined]
    compile_expr.cache_clear()
    return True


__all__ = ["CompiledExpr", "ExpressionError", "Path", "compile_expr", "getpath", "setpath"]
