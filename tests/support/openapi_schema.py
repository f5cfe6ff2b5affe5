"""Validation against Kubernetes' published OpenAPI v3 documents (``$WMAP_SHARED_DIR/k8s-openapi``),
for API groups the test API server (v1.20) does not serve: the Workload API's
``scheduling.k8s.io/v1beta1`` Workload and PodGroup and ``v1alpha3`` CompositePodGroup.

Strict as the API server's strict field validation is: a field the schema does not name is an
error (Kubernetes' documents never set ``additionalProperties: false``; the server still refuses
unknown fields), and so are wrong types, missing required fields, int32 overflow and enum values
outside the list. ``$ref`` (also wrapped in ``allOf``, as the documents write them) resolves in
the document's ``components.schemas``. Only the keywords those documents use are implemented;
an unknown keyword fails loudly instead of passing silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from tests.support.apiserver_binary import shared_dir

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
#: Keywords that do not constrain the value (descriptions, Kubernetes extensions, defaults).
_IGNORED = frozenset(
    {
        "description",
        "default",
        "x-kubernetes-group-version-kind",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
        "x-kubernetes-patch-strategy",
        "x-kubernetes-patch-merge-key",
        "x-kubernetes-unions",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-int-or-string",
        "x-kubernetes-embedded-resource",
    }
)
_HANDLED = frozenset(
    {"type", "properties", "required", "items", "additionalProperties", "enum", "format", "$ref", "allOf"}
)


def openapi_dir() -> Path:
    return shared_dir() / "k8s-openapi"


@cache
def document(group_version: str) -> Mapping[str, Any]:
    """The OpenAPI v3 document of ``scheduling.k8s.io/v1beta1`` (etc.)."""
    group, version = group_version.split("/")
    path = openapi_dir() / f"apis__{group}__{version}_openapi.json"
    data: Mapping[str, Any] = json.loads(path.read_text())
    return data


def schema_name(api_version: str, kind: str) -> str:
    group, version = api_version.split("/")
    short = group.split(".")[0]
    return f"io.k8s.api.{short}.{version}.{kind}"


class SchemaErrors(list[str]):
    pass


def validate(obj: Mapping[str, Any]) -> list[str]:
    """Every way ``obj`` breaks the schema of its apiVersion and kind (empty: valid)."""
    api_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
    doc = document(api_version)
    name = schema_name(api_version, kind)
    schemas = doc["components"]["schemas"]
    if name not in schemas:
        return [f"$: no schema {name} in the {api_version} document"]
    errors: list[str] = []
    _check(obj, schemas[name], schemas, "$", errors)
    return errors


def _resolve(schema: Mapping[str, Any], schemas: Mapping[str, Any]) -> Mapping[str, Any]:
    seen = 0
    while True:
        if "$ref" in schema:
            schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
        elif "allOf" in schema and len(schema["allOf"]) == 1 and not (set(schema) & {"type", "properties"}):
            schema = schema["allOf"][0]
        else:
            return schema
        seen += 1
        if seen > 64:
            raise ValueError("$ref chain too long")


def _check(
    value: Any, schema: Mapping[str, Any], schemas: Mapping[str, Any], path: str, errors: list[str]
) -> None:
    schema = _resolve(schema, schemas)
    unknown = set(schema) - _HANDLED - _IGNORED
    if unknown:
        raise ValueError(f"{path}: schema keywords not implemented: {sorted(unknown)}")
    for part in schema.get("allOf", ()):
        _check(value, part, schemas, path, errors)
    kind = schema.get("type")
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "object":
        if not isinstance(value, dict):
            errors.append(f"{path}: {value!r} is not an object")
            return
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key in schema.get("required", ()):
            if key not in value:
                errors.append(f"{path}: missing required field {key!r}")
        for key, sub in value.items():
            if props is not None and key in props:
                _check(sub, props[key], schemas, f"{path}.{key}", errors)
            elif isinstance(extra, Mapping):
                _check(sub, extra, schemas, f"{path}.{key}", errors)
            elif props is not None or extra is False:
                errors.append(f"{path}: unknown field {key!r}")
    elif kind == "array":
        if not isinstance(value, list):
            errors.append(f"{path}: {value!r} is not an array")
            return
        for i, item in enumerate(value):
            _check(item, schema.get("items", {}), schemas, f"{path}[{i}]", errors)
    elif kind == "string":
        if not isinstance(value, str):
            errors.append(f"{path}: {value!r} is not a string")
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            errors.append(f"{path}: {value!r} is not an integer")
            return
        low, high = _INT32 if schema.get("format") == "int32" else _INT64
        if not low <= value <= high:
            errors.append(f"{path}: {value} does not fit {schema.get('format', 'int64')}")
    elif kind == "boolean":
        if not isinstance(value, bool):
            errors.append(f"{path}: {value!r} is not a boolean")
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            errors.append(f"{path}: {value!r} is not a number")
    elif kind is not None:
        raise ValueError(f"{path}: type {kind!r} not implemented")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
