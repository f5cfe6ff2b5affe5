"""Karmada's ``config.karmada.io/v1alpha1`` ``ResourceInterpreterContext`` on the wire.

Karmada POSTs ``{"request": {uid, kind{group,version,kind}, name, namespace, operation, object,
observedObject?, replicas, aggregatedStatus?}}`` (``interpretercontext_types.go``; ``replicas`` is
always sent, 0 outside ``ReviseReplica``) and reads ``response{uid, successful, status{message,code},
patch (base64 JSONPatch), patchType, replicaRequirements, replicas, components, dependencies,
rawStatus, healthy}``. :func:`review` turns one decoded body into the answer; it never raises:
a body that is not a request, a kind no definition covers or an object that cannot be interpreted
get ``successful: false`` with the reason (Karmada logs ``status.message``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from workload_map.errors import InterpretError, WorkloadMapError
from workload_map.resolve.compiled import CompiledDefinition

from .operations import Request, failure, interpret

log = logging.getLogger(__name__)

API_VERSION = "config.karmada.io/v1alpha1"
KIND = "ResourceInterpreterContext"
#: Longest ``status.message`` sent back (a hostile object's values can be long).
MAX_MESSAGE = 4096

#: (group, version, kind) -> the compiled definition covering it, or None.
Lookup = Callable[[str, str, str], CompiledDefinition | None]

BAD_REQUEST = 400
NOT_COVERED = 404
UNPROCESSABLE = 422
INTERNAL = 500


def envelope(response: Mapping[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": KIND, "response": dict(response)}


def _cut(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."


def refuse(uid: str, message: str, code: int) -> dict[str, Any]:
    """A whole ``ResourceInterpreterContext`` refusing the request."""
    return envelope(failure(uid, _cut(message), code))


class BadRequest(ValueError):
    """The body is not a ResourceInterpreterContext request Karmada would send."""


def _str(request: Mapping[str, Any], key: str, *, required: bool = True) -> str:
    value = request.get(key, None if required else "")
    if not isinstance(value, str):
        raise BadRequest(f"request.{key} must be a string")
    return value


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRequest(f"{where} must be a JSON object")
    return value


def parse_request(body: Any) -> tuple[str, tuple[str, str, str], Request]:
    """(uid, (group, version, kind), request) of a decoded body; :class:`BadRequest` otherwise."""
    if not isinstance(body, Mapping) or not isinstance(body.get("request"), Mapping):
        raise BadRequest("the body is not a ResourceInterpreterContext with a request object")
    request = body["request"]
    uid = _str(request, "uid")
    kind = request.get("kind")
    if not isinstance(kind, Mapping):
        raise BadRequest("request.kind must be an object {group, version, kind}")
    gvk = (_str(kind, "group", required=False), _str(kind, "version"), _str(kind, "kind"))
    operation = _str(request, "operation")
    obj = _object(request.get("object"), "request.object")
    observed_raw = request.get("observedObject")
    observed = None if observed_raw is None else _object(observed_raw, "request.observedObject")
    replicas = request.get("replicas")
    if replicas is not None and (isinstance(replicas, bool) or not isinstance(replicas, int)):
        raise BadRequest("request.replicas must be an integer")
    items_raw = request.get("aggregatedStatus")
    if items_raw is None:
        items: list[Mapping[str, Any]] = []
    elif isinstance(items_raw, list) and all(isinstance(i, Mapping) for i in items_raw):
        items = items_raw
    else:
        raise BadRequest("request.aggregatedStatus must be a list of objects")
    return uid, gvk, Request(operation, obj, observed, replicas, items)


def review(body: Any, lookup: Lookup) -> dict[str, Any]:
    """The ``ResourceInterpreterContext`` answering one decoded request body."""
    uid = ""
    if isinstance(body, Mapping) and isinstance(body.get("request"), Mapping):
        raw_uid = body["request"].get("uid")
        uid = raw_uid if isinstance(raw_uid, str) else ""
    try:
        uid, (group, version, kind), request = parse_request(body)
    except BadRequest as exc:
        return refuse(uid, f"wmap interpreter: {exc}", BAD_REQUEST)
    api_version = f"{group}/{version}" if group else version
    try:
        definition = lookup(group, version, kind)
    except WorkloadMapError as exc:
        return refuse(uid, f"wmap interpreter: {api_version} {kind}: {exc}", NOT_COVERED)
    if definition is None:
        return refuse(uid, f"wmap interpreter: no Karta definition covers {api_version} {kind}", NOT_COVERED)
    try:
        answer = interpret(definition, request)
    except InterpretError as exc:
        return refuse(uid, f"wmap interpreter: {kind} {_name(request.obj)}: {exc}", UNPROCESSABLE)
    except Exception as exc:  # a bug must still answer, never hang or drop Karmada's call
        log.exception("interpreting %s %s failed", kind, request.operation)
        return refuse(uid, f"wmap interpreter: internal error: {type(exc).__name__}: {exc}", INTERNAL)
    return envelope(answer.response(uid))


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name") if isinstance(meta, Mapping) else None
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    if not isinstance(name, str):
        return "(unnamed)"
    return f"{namespace}/{name}" if isinstance(namespace, str) and namespace else name
