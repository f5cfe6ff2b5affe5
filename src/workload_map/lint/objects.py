"""A small structural-schema validator for workload objects (what the API server checks first).

Checks types (``integer`` accepts integral floats, ``number`` accepts integers),
``x-kubernetes-int-or-string``, ``nullable``, ``required``, ``enum``, ``minimum``/``maximum``,
``minItems``/``maxItems``, ``properties``/``additionalProperties``/``items``, and reports fields
the schema does not declare (the API server prunes them) unless
``x-kubernetes-preserve-unknown-fields`` (or the built-in subsets' ``x-wmap-partial``) allows
them. The root ``apiVersion``/``kind``/``metadata`` are the server's business and are skipped.
Not covered: formats, patterns, CEL rules, ``oneOf``/``anyOf`` beyond int-or-string.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workload_map.kube.objects import split_api_version
from workload_map.lint.findings import LintFinding, make
from workload_map.lint.navigate import kind_of
from workload_map.lint.schemas import KindSchema, SchemaSet

__all__ = ["validate_object"]

_ROOT_SKIP = frozenset({"apiVersion", "kind", "metadata"})


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _fits(value: Any, kind: str) -> bool:
    t = _type_name(value)
    if kind == "any" or t == kind:
        return True
    if kind == "int-or-string":
        return t in ("integer", "string") or (t == "number" and float(value).is_integer())
    if kind == "number":
        return t == "integer"
    if kind == "integer":
        return t == "number" and float(value).is_integer()
    return False


def _path(base: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if key.replace("_", "a").replace("-", "a").isalnum() else f'{base}["{key}"]'


def validate_object(obj: Mapping[str, Any], schemas: SchemaSet | KindSchema) -> list[LintFinding]:
    """Findings for ``obj`` against the schema of its ``apiVersion``/``kind`` (LINT106 when none
    is known). Findings' ``field`` is the object path (``.spec.replicas``), ``schema`` the node."""
    if isinstance(schemas, KindSchema):
        ks: KindSchema | None = schemas
    else:
        api = str(obj.get("apiVersion", ""))
        group, version = split_api_version(api)
        ks = schemas.get(group, version, str(obj.get("kind", "")))
        if ks is None:
            from workload_map.lint.schemas import builtin_schemas

            ks = next(
                (
                    b
                    for b in builtin_schemas()
                    if (b.group, b.version, b.kind) == (group, version, obj.get("kind"))
                ),
                None,
            )
        if ks is None:
            return [make("LINT106", f"no schema for {api} {obj.get('kind')}")]
    assert ks is not None
    out: list[LintFinding] = []
    name = obj.get("metadata", {}).get("name") if isinstance(obj.get("metadata"), Mapping) else None
    _walk(obj, ks.schema, "", "", ks, out, root=True, name=name if isinstance(name, str) else None)
    return out


def _walk(
    value: Any,
    schema: Mapping[str, Any],
    path: str,
    pointer: str,
    ks: KindSchema,
    out: list[LintFinding],
    *,
    root: bool = False,
    name: str | None = None,
) -> None:
    def add(code: str, message: str, at: str = pointer, field: str | None = None) -> None:
        out.append(
            make(
                code, message, field=field or path or ".", schema=f"{ks.source}#{at or '/'}", definition=name
            )
        )

    kind = kind_of(schema)
    if value is None:
        if not schema.get("nullable") and kind != "any":
            add("LINT101", f"{path or '.'} is null; the schema wants {kind}")
        return
    if not _fits(value, kind):
        add("LINT101", f"{path or '.'} is {_type_name(value)}; the schema wants {kind}")
        return
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        add("LINT103", f"{path or '.'} is {value!r}; allowed: {', '.join(map(repr, enum))}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if isinstance(lo, (int, float)) and value < lo:
            add("LINT105", f"{path} is {value}, below the minimum {lo}")
        if isinstance(hi, (int, float)) and value > hi:
            add("LINT105", f"{path} is {value}, above the maximum {hi}")
    if isinstance(value, list):
        lo, hi = schema.get("minItems"), schema.get("maxItems")
        if isinstance(lo, int) and len(value) < lo:
            add("LINT105", f"{path} has {len(value)} items, fewer than {lo}")
        if isinstance(hi, int) and len(value) > hi:
            add("LINT105", f"{path} has {len(value)} items, more than {hi}")
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                _walk(item, items, _path(path, i), f"{pointer}/items", ks, out, name=name)
        return
    if not isinstance(value, Mapping):
        return
    props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    assert isinstance(props, Mapping)
    required = schema.get("required")
    if isinstance(required, list):
        for r in required:
            if r not in value and not (root and r in _ROOT_SKIP):
                add("LINT102", f"{_path(path, r)} is required", field=_path(path, r))
    addl = schema.get("additionalProperties")
    lenient = bool(
        schema.get("x-kubernetes-preserve-unknown-fields") or schema.get("x-wmap-partial") or addl is True
    )
    for key, child in value.items():
        if root and key in _ROOT_SKIP:
            continue
        k = str(key)
        sub = props.get(k)
        if isinstance(sub, Mapping):
            _walk(
                child,
                sub,
                _path(path, k),
                f"{pointer}/properties/{k.replace('~', '~0').replace('/', '~1')}",
                ks,
                out,
                name=name,
            )
        elif isinstance(addl, Mapping):
            _walk(child, addl, _path(path, k), f"{pointer}/additionalProperties", ks, out, name=name)
        elif not lenient and kind != "any":
            add(
                "LINT104",
                f"{_path(path, k)} is not in the schema (the API server drops it)",
                field=_path(path, k),
            )
