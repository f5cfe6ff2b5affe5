"""A definition model rebuilt from what it dumped, without pydantic's validator (issue 24).

The parsed catalog's cache (``workload_map.catalog.cache``) holds each definition as
``Karta.model_dump(mode="json", by_alias=True)`` wrote it. Rebuilding it through
``model_validate`` builds every model's validator first (the models are declared with
``defer_build``), about a fifth of ``describe``'s start-up beside the reads it waits for; a
command that only reads definitions never needs those validators. :func:`rebuild` walks the
models' own field annotations instead and checks every value's shape on the way (a string where
a string is declared, a list of objects where a tuple of models is...), so a file that is not
what these models wrote raises :class:`ValueError` and the caller treats it as a miss, as a
validation error was. It knows the shapes the definition models use (str, int, bool, ``None``
unions, nested models, ``tuple[X, ...]``, ``dict[str, X]``, ``Any``); a field of another shape
is a :class:`TypeError` when its model is first rebuilt, so a new kind of field cannot slip
through unchecked.

:func:`fingerprint` names every field of a model tree with its alias and annotation: the cache
key includes it, so a model changed without a version bump (an editable install) is a miss.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["fingerprint", "rebuild"]

M = TypeVar("M", bound=BaseModel)
_Check = Callable[[Any], Any]
#: Per model class: (wire key, field name, check) for each field, the wire keys, the required fields.
_Plan = tuple[tuple[tuple[str, str, _Check], ...], frozenset[str], tuple[str, ...]]

_PLANS: dict[type[BaseModel], _Plan] = {}


def rebuild(cls: type[M], data: Any) -> M:
    """``cls`` built from ``data`` (its own camelCase JSON dump) without validation; every value's
    shape is checked against the field's annotation, a key no field has is refused, a missing one
    takes the field's default. Raises :class:`ValueError` when ``data`` does not fit."""
    if not isinstance(data, dict):
        raise ValueError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    fields, keys, required = _plan(cls)
    unknown = data.keys() - keys
    if unknown:
        raise ValueError(f"{cls.__name__}: unexpected field {sorted(unknown)[0]!r}")
    values = {name: check(data[key]) for key, name, check in fields if key in data}
    for name in required:
        if name not in values:
            raise ValueError(f"{cls.__name__}: missing field {name!r}")
    return cls.model_construct(_fields_set=set(values), **values)


def fingerprint(cls: type[BaseModel]) -> str:
    """Every field of ``cls`` and of the models it holds: class, field, alias, annotation."""
    seen: dict[type[BaseModel], str] = {}
    pending = [cls]
    while pending:
        model = pending.pop()
        if model in seen:
            continue
        parts = []
        for name, info in model.model_fields.items():
            parts.append(f"{name}:{info.alias}:{info.annotation!r}")
            pending.extend(_models_in(info.annotation))
        seen[model] = f"{model.__module__}.{model.__qualname__}({','.join(parts)})"
    return ";".join(seen[m] for m in sorted(seen, key=lambda m: m.__qualname__))


def _plan(cls: type[BaseModel]) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        fields = tuple(
            (info.alias or name, name, _check(info.annotation, f"{cls.__name__}.{name}"))
            for name, info in cls.model_fields.items()
        )
        required = tuple(name for name, info in cls.model_fields.items() if info.is_required())
        plan = _PLANS[cls] = (fields, frozenset(key for key, _, _ in fields), required)
    return plan


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _check(annotation: Any, where: str) -> _Check:
    """The function that checks (and, for models and tuples, converts) one value of ``annotation``."""
    if annotation is Any:
        return _any
    if annotation is str or annotation is bool or annotation is int:
        return _scalar(annotation, where)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        model = annotation
        return lambda value: rebuild(model, value)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            inner = _check(rest[0], where)
            return lambda value: None if value is None else inner(value)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _check(args[0], where)

        def as_tuple(value: Any) -> tuple[Any, ...]:
            if not isinstance(value, list):
                raise ValueError(f"{where}: expected a list, got {type(value).__name__}")
            return tuple(item(v) for v in value)

        return as_tuple
    if origin is dict and len(args) == 2 and args[0] is str:
        entry = _check(args[1], where)

        def as_dict(value: Any) -> dict[str, Any]:
            if not isinstance(value, dict):
                raise ValueError(f"{where}: expected an object, got {type(value).__name__}")
            return {k: entry(v) for k, v in value.items()}

        return as_dict
    raise TypeError(f"{where}: rebuild does not know the field type {annotation!r}")


def _any(value: Any) -> Any:
    return value


def _scalar(kind: type, where: str) -> _Check:
    def check(value: Any) -> Any:
        # bool is an int in Python, not in JSON: an int field refuses true/false.
        if type(value) is not kind:
            raise ValueError(f"{where}: expected {kind.__name__}, got {type(value).__name__}")
        return value

    return check
