"""The edits as a JSON document: what the REST API's ``/edits`` body and a WorkloadPolicy's
``spec.set`` hold, turned into the edits of :mod:`workload_map.resolve.edits`.

::

    image:             [{container: "*", image: "img:2", component: worker}]
    resources:         [{container: "*", requests: {cpu: "2"}, limits: {nvidia.com/gpu: "1"}}]
    env:               [{container: "*", set: {K: V}, unset: [K], from: [{secret: NAME, prefix: P_}]}]
    schedulerName:     kai-scheduler
    priorityClassName: train-high
    nodeSelector:      {set: {pool: a100}, unset: [old]}
    tolerations:       {add: [{key: nvidia.com/gpu, effect: NoSchedule}], remove: ["KEY[:EFFECT]"]}
    podLabels:         {set: {kai.scheduler/queue: a}, unset: [k]}
    podAnnotations:    {set: {...}, unset: [...]}
    podFields:         [{path: schedulingGroup.podGroupName, value: pg-1}, {path: x, remove: true}]
    labels:            {set: {...}, unset: [...]}      # the workload object's own
    annotations:       {set: {...}, unset: [...]}

Edits are applied in this order whatever the document's key order. Every problem is an
:class:`InvalidEditError` whose message starts with the field's path (``spec.set.tolerations
.add[0].effect: ...``), so a validating webhook and an API answer can say which field is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from workload_map.resolve._support import jq_type
from workload_map.resolve.edits import (
    EnvFrom,
    Existing,
    InvalidEditError,
    PodEdit,
    SetAnnotations,
    SetEnv,
    SetImage,
    SetLabels,
    SetNodeSelector,
    SetPodAnnotations,
    SetPodField,
    SetPodLabels,
    SetPriorityClassName,
    SetResources,
    SetSchedulerName,
    SetTolerations,
    Toleration,
)

#: The document's keys, in the order their edits are applied.
KEYS = (
    "image",
    "resources",
    "env",
    "schedulerName",
    "priorityClassName",
    "nodeSelector",
    "tolerations",
    "podLabels",
    "podAnnotations",
    "podFields",
    "labels",
    "annotations",
)
#: Entries of one list at most (images, resources, env blocks, pod fields, tolerations).
MAX_ITEMS = 100


def _fail(where: str, message: str) -> InvalidEditError:
    return InvalidEditError(f"{where}: {message}", field=where)


def _object(value: Any, where: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(where, f"must be an object, got {jq_type(value)}")
    unknown = [k for k in value if k not in allowed]
    if unknown:
        raise _fail(f"{where}.{unknown[0]}", f"unknown field (expected one of {', '.join(allowed)})")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, f"must be a string, got {jq_type(value)}")
    if not value:
        raise _fail(where, "must not be empty")
    return value


def _strings(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise _fail(where, f"must be an object of strings, got {jq_type(value)}")
    for k, v in value.items():
        if not isinstance(v, str):
            raise _fail(f"{where}[{k}]", f"must be a string, got {jq_type(v)}")
    return {str(k): v for k, v in value.items()}


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(where, f"must be an array, got {jq_type(value)}")
    if len(value) > MAX_ITEMS:
        raise _fail(where, f"at most {MAX_ITEMS} entries, got {len(value)}")
    return value


def _keys(value: Any, where: str) -> tuple[str, ...]:
    return tuple(_string(v, f"{where}[{i}]") for i, v in enumerate(_list(value, where)))


@contextmanager
def _at(where: str) -> Iterator[None]:
    """An edit's own value checks, reported under ``where`` (the document's path)."""
    try:
        yield
    except InvalidEditError as exc:
        if exc.field.startswith(where):
            raise
        inner = exc.field if not exc.field or exc.field.startswith("[") else f".{exc.field}"
        raise InvalidEditError(f"{where}: {exc}", field=f"{where}{inner}") from None


def _set_unset(value: Any, where: str) -> tuple[dict[str, str], tuple[str, ...]]:
    body = _object(value, where, ("set", "unset"))
    return _strings(body.get("set", {}), f"{where}.set"), _keys(body.get("unset", []), f"{where}.unset")


def _optional(body: Mapping[str, Any], key: str, where: str) -> str | None:
    return _string(body[key], f"{where}.{key}") if key in body else None


def _image(value: Any, at: str, existing: Existing) -> list[PodEdit]:
    out: list[PodEdit] = []
    for i, item in enumerate(_list(value, at)):
        w = f"{at}[{i}]"
        e = _object(item, w, ("container", "image", "component"))
        with _at(w):
            container = _string(e.get("container", "*"), f"{w}.container")
            out.append(
                SetImage(container, _string(e.get("image"), f"{w}.image"), _optional(e, "component", w))
            )
    return out


def _resources(value: Any, at: str, existing: Existing) -> list[PodEdit]:
    out: list[PodEdit] = []
    for i, item in enumerate(_list(value, at)):
        w = f"{at}[{i}]"
        e = _object(item, w, ("container", "component", "requests", "limits"))
        with _at(w):
            out.append(
                SetResources(
                    requests=_strings(e.get("requests", {}), f"{w}.requests"),
                    limits=_strings(e.get("limits", {}), f"{w}.limits"),
                    container=_string(e.get("container", "*"), f"{w}.container"),
                    component=_optional(e, "component", w),
                )
            )
    return out


def _env(value: Any, at: str, existing: Existing) -> list[PodEdit]:
    out: list[PodEdit] = []
    for i, item in enumerate(_list(value, at)):
        w = f"{at}[{i}]"
        e = _object(item, w, ("container", "component", "set", "unset", "from"))
        froms = _list(e.get("from", []), f"{w}.from")
        sources = tuple(_env_from(s, f"{w}.from[{j}]") for j, s in enumerate(froms))
        with _at(w):
            out.append(
                SetEnv(
                    values=_strings(e.get("set", {}), f"{w}.set"),
                    unset=_keys(e.get("unset", []), f"{w}.unset"),
                    env_from=sources,
                    container=_string(e.get("container", "*"), f"{w}.container"),
                    component=_optional(e, "component", w),
                )
            )
    return out


def _names(
    cls: type[SetSchedulerName] | type[SetPriorityClassName],
) -> Callable[[Any, str, Existing], list[PodEdit]]:
    def build(value: Any, at: str, existing: Existing) -> list[PodEdit]:
        name = _string(value, at)
        with _at(at):
            return [cls(name, existing)]

    return build


def _node_selector(value: Any, at: str, existing: Existing) -> list[PodEdit]:
    values, unset = _set_unset(value, at)
    with _at(at):
        return [SetNodeSelector(values, unset, existing)]


def _tolerations(value: Any, at: str, existing: Existing) -> list[PodEdit]:
    t = _object(value, at, ("add", "remove"))
    add = tuple(_toleration(x, f"{at}.add[{i}]") for i, x in enumerate(_list(t.get("add", []), f"{at}.add")))
    remove = _keys(t.get("remove", []), f"{at}.remove")
    with _at(at):
        return [SetTolerations(add=add, remove=remove)]


def _pod_fields(value: Any, at: str, existing: Existing) -> list[PodEdit]:
    out: list[PodEdit] = []
    for i, item in enumerate(_list(value, at)):
        w = f"{at}[{i}]"
        e = _object(item, w, ("path", "value", "remove"))
        path = tuple(_string(e.get("path"), f"{w}.path").split("."))
        remove = e.get("remove", False)
        if not isinstance(remove, bool):
            raise _fail(f"{w}.remove", f"must be a boolean, got {jq_type(remove)}")
        with _at(w):
            out.append(SetPodField(path, e.get("value"), remove=remove, existing=existing))
    return out


def _maps(
    cls: type[SetPodLabels | SetPodAnnotations | SetLabels | SetAnnotations],
) -> Callable[[Any, str, Existing], list[PodEdit]]:
    def build(value: Any, at: str, existing: Existing) -> list[PodEdit]:
        values, unset = _set_unset(value, at)
        with _at(at):
            return [cls(values, unset, existing)]

    return build


_BUILDERS: dict[str, Callable[[Any, str, Existing], list[PodEdit]]] = {
    "image": _image,
    "resources": _resources,
    "env": _env,
    "schedulerName": _names(SetSchedulerName),
    "priorityClassName": _names(SetPriorityClassName),
    "nodeSelector": _node_selector,
    "tolerations": _tolerations,
    "podLabels": _maps(SetPodLabels),
    "podAnnotations": _maps(SetPodAnnotations),
    "podFields": _pod_fields,
    "labels": _maps(SetLabels),
    "annotations": _maps(SetAnnotations),
}


def edits_from_document(doc: Any, where: str = "", *, existing: Existing = "overwrite") -> list[PodEdit]:
    """The edits a document asks for (see the module notes); ``where`` prefixes field paths in
    messages; ``existing`` is what map and name edits do with a value already set otherwise."""
    prefix = f"{where}." if where else ""
    body = _object(doc, where or "edits", KEYS)
    out: list[PodEdit] = []
    for key in KEYS:
        if key in body:
            out.extend(_BUILDERS[key](body[key], f"{prefix}{key}", existing))
    if not out:
        raise _fail(where or "edits", f"no change asked for (give one of {', '.join(KEYS)})")
    return out


def _env_from(value: Any, where: str) -> EnvFrom:
    e = _object(value, where, ("secret", "configMap", "prefix"))
    kinds = [k for k in ("secret", "configMap") if k in e]
    if len(kinds) != 1:
        raise _fail(where, "give exactly one of secret or configMap")
    kind = kinds[0]
    prefix = e.get("prefix", "")
    if not isinstance(prefix, str):
        raise _fail(f"{where}.prefix", f"must be a string, got {jq_type(prefix)}")
    try:
        return EnvFrom(kind, _string(e[kind], f"{where}.{kind}"), prefix)  # type: ignore[arg-type]
    except InvalidEditError as exc:
        raise _fail(where, str(exc)) from None


def _toleration(value: Any, where: str) -> Toleration:
    e = _object(value, where, ("key", "operator", "value", "effect", "tolerationSeconds"))
    fields = {k: e.get(k, "") for k in ("key", "operator", "value", "effect")}
    for k, v in fields.items():
        if not isinstance(v, str):
            raise _fail(f"{where}.{k}", f"must be a string, got {jq_type(v)}")
    seconds = e.get("tolerationSeconds")
    try:
        return Toleration(
            key=fields["key"],
            effect=fields["effect"],
            value=fields["value"],
            operator=fields["operator"],
            toleration_seconds=seconds,
        )
    except InvalidEditError as exc:
        raise InvalidEditError(f"{where}.{exc.field}: {exc}", field=f"{where}.{exc.field}") from None


def _set_unset_schema(what: str) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "description": f"{what}: keys to set and keys to remove.",
        "properties": {
            "set": {"type": "object", "additionalProperties": {"type": "string"}},
            "unset": {"type": "array", "maxItems": MAX_ITEMS, "items": {"type": "string", "minLength": 1}},
        },
    }


def _items(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        item["required"] = list(required)
    return {"type": "array", "maxItems": MAX_ITEMS, "items": item}


_STR = {"type": "string", "minLength": 1}
_QUANTITIES = {"type": "object", "additionalProperties": {"type": "string"}}

#: JSON Schema of the document (the REST API's ``/edits`` body ``edits``); values are checked
#: further by :func:`edits_from_document` with Kubernetes' rules.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "minProperties": 1,
    "description": "Pod-template edits, applied in this key order to every pod location of the workload.",
    "properties": {
        "image": _items({"container": _STR, "image": _STR, "component": _STR}, ("image",)),
        "resources": _items(
            {"container": _STR, "component": _STR, "requests": _QUANTITIES, "limits": _QUANTITIES}
        ),
        "env": _items(
            {
                "container": _STR,
                "component": _STR,
                "set": {"type": "object", "additionalProperties": {"type": "string"}},
                "unset": {"type": "array", "maxItems": MAX_ITEMS, "items": _STR},
                "from": _items({"secret": _STR, "configMap": _STR, "prefix": {"type": "string"}}),
            }
        ),
        "schedulerName": _STR,
        "priorityClassName": _STR,
        "nodeSelector": _set_unset_schema("spec.nodeSelector"),
        "tolerations": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "add": _items(
                    {
                        "key": {"type": "string"},
                        "operator": {"enum": ["Exists", "Equal"]},
                        "value": {"type": "string"},
                        "effect": {"enum": ["", "NoSchedule", "PreferNoSchedule", "NoExecute"]},
                        "tolerationSeconds": {"type": "integer"},
                    }
                ),
                "remove": {"type": "array", "maxItems": MAX_ITEMS, "items": _STR},
            },
        },
        "podLabels": _set_unset_schema("Pod template labels"),
        "podAnnotations": _set_unset_schema("Pod template annotations"),
        "podFields": _items({"path": _STR, "value": {}, "remove": {"type": "boolean"}}, ("path",)),
        "labels": _set_unset_schema("The workload's own labels"),
        "annotations": _set_unset_schema("The workload's own annotations"),
    },
}


__all__ = ["KEYS", "MAX_ITEMS", "SCHEMA", "edits_from_document"]
