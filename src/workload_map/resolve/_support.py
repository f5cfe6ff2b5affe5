"""Internal helpers shared by the resolver modules: the expression protocol, jq-style
stringification and the error type that carries a location."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

import orjson

from workload_map.errors import ResolveError, WorkloadMapError


class Expression(Protocol):
    """What the resolver needs from a compiled jq expression (``workload_map.expr``)."""

    def all(self, data: Any, variables: Mapping[str, Any] | None = None) -> list[Any]: ...

    def first(self, data: Any) -> Any: ...

    @property
    def is_assignable(self) -> bool: ...

    def paths(self, data: Any) -> list[tuple[str | int, ...]]: ...


def compile_jq(source: str, variables: tuple[str, ...] = ()) -> Expression:
    """Compile through ``workload_map.expr`` (imported lazily so ``import workload_map`` is light);
    ``variables`` names the ``$vars`` the expression may read."""
    from workload_map.expr import compile_expression

    expr: Expression = compile_expression(source, variables)
    return expr


class ResolveFieldError(ResolveError):
    """A :class:`~workload_map.errors.ResolveError` that knows where it happened.

    ``definition`` is the Karta name, ``component`` the component name (``None`` for
    workload-level problems), ``field`` the definition field (``specDefinition.podSpecPath``),
    ``detail`` the bare message (e.g. ``instance ids count (2) does not match results count (3)``).
    """

    def __init__(self, definition: str, component: str | None, field: str | None, detail: str) -> None:
        self.definition = definition
        self.component = component
        self.field = field
        self.detail = detail
        where = [f'karta "{definition}"']
        if component is not None:
            where.append(f'component "{component}"')
        if field:
            where.append(field)
        super().__init__(f"{', '.join(where)}: {detail}")


def jq_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def format_number(value: float | int) -> str:
    """A number as jq (gojq) prints it: integral values without a fraction."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isfinite(value) and value == int(value) and abs(value) < 1e17:
        return str(int(value))
    if math.isnan(value):
        return "null"
    if math.isinf(value):
        return "1.7976931348623157e+308" if value > 0 else "-1.7976931348623157e+308"
    return repr(value)


def jq_tostring(value: Any) -> str:
    """``tostring``: strings unchanged, everything else as compact JSON (gojq key order)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return format_number(value)
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return str(value)


def wrap_error(exc: BaseException) -> str:
    """The message of an engine error (or of an unexpected exception, named by its type)."""
    if isinstance(exc, WorkloadMapError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
