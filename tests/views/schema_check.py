"""A tiny JSON Schema checker for the keywords our schemas use (no jsonschema dependency):
type, required, properties, additionalProperties, items, enum, const, $ref (local $defs),
oneOf, anyOf, minItems, minimum."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parents[2] / "src" / "workload_map" / "schemas"

_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMAS / name).read_text())
    return data


def _is_type(value: Any, t: str) -> bool:
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _TYPES[t])


def errors(
    value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None, path: str = "$"
) -> list[str]:
    root = root or schema
    out: list[str] = []
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/$defs/"), ref
        return errors(value, root["$defs"][ref[len("#/$defs/") :]], root, path)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, t) for t in types):
            return [f"{path}: {value!r} is not of type {types}"]
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} not in {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: {value!r} != {schema['const']!r}")
    if "minimum" in schema and isinstance(value, int) and value < schema["minimum"]:
        out.append(f"{path}: {value} < {schema['minimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{path}: missing {key!r}")
        props = schema.get("properties", {})
        for key, sub in value.items():
            if key in props:
                out += errors(sub, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                out.append(f"{path}: unexpected {key!r}")
            elif isinstance(schema.get("additionalProperties"), dict):
                out += errors(sub, schema["additionalProperties"], root, f"{path}.{key}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{path}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                out += errors(item, schema["items"], root, f"{path}[{i}]")
    if "oneOf" in schema:
        ok = [s for s in schema["oneOf"] if not errors(value, s, root, path)]
        if len(ok) != 1:
            out.append(f"{path}: matches {len(ok)} of oneOf")
    if "anyOf" in schema and not any(not errors(value, s, root, path) for s in schema["anyOf"]):
        out.append(f"{path}: matches none of anyOf")
    return out


def check(value: Any, name: str) -> None:
    problems = errors(value, load(name))
    assert not problems, "\n".join(problems)
