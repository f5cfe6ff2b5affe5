"""The Karmada interpreter operations, computed once from the resolver, for the webhook and for
``wmap interpret`` alike.

:func:`interpret` answers one operation for one object through one definition and returns an
:class:`Answer`, which renders Karmada's ``ResourceInterpreterResponse`` (:meth:`Answer.response`).
Objects are never modified; patches are RFC 6902 from the object Karmada sent to the answer.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from workload_map.errors import InterpretError, WorkloadMapError
from workload_map.resolve.compiled import CompiledDefinition
from workload_map.resolve.patch import JsonPatch, json_patch
from workload_map.resolve.placement import instance_needs
from workload_map.resolve.resolver import resolve

from . import requirements, revise, status
from .dependencies import dependencies
from .retain import retain

INTERPRET_REPLICA = "InterpretReplica"
INTERPRET_COMPONENT = "InterpretComponent"
REVISE_REPLICA = "ReviseReplica"
RETAIN = "Retain"
INTERPRET_STATUS = "InterpretStatus"
AGGREGATE_STATUS = "AggregateStatus"
INTERPRET_HEALTH = "InterpretHealth"
INTERPRET_DEPENDENCY = "InterpretDependency"

#: Every operation answered, in Karmada's order (``resourceinterpreterwebhook_types.go``; ``Prune``
#: is Karmada's own business for the kinds it knows and is not claimed).
OPERATIONS: tuple[str, ...] = (
    INTERPRET_REPLICA,
    INTERPRET_COMPONENT,
    REVISE_REPLICA,
    RETAIN,
    INTERPRET_STATUS,
    AGGREGATE_STATUS,
    INTERPRET_HEALTH,
    INTERPRET_DEPENDENCY,
)
#: Karmada's ``Replicas``/``Component.replicas`` are int32.
INT32_MAX = 2**31 - 1
PATCH_TYPE = "JSONPatch"


@dataclass(frozen=True)
class Answer:
    """One operation's result; only the field of its operation is set."""

    operation: str
    replicas: int | None = None
    replica_requirements: dict[str, Any] | None = None
    components: list[dict[str, Any]] | None = None
    patch: JsonPatch | None = None
    raw_status: dict[str, Any] | None = None
    healthy: bool | None = None
    dependencies: list[dict[str, str]] | None = None

    def response(self, uid: str) -> dict[str, Any]:
        """Karmada's ``ResourceInterpreterResponse`` (``successful: true``)."""
        out: dict[str, Any] = {"uid": uid, "successful": True}
        op = self.operation
        if op == INTERPRET_REPLICA:
            out["replicas"] = self.replicas
            if self.replica_requirements:
                out["replicaRequirements"] = self.replica_requirements
        elif op == INTERPRET_COMPONENT:
            out["components"] = self.components or []
        elif op in (REVISE_REPLICA, RETAIN, AGGREGATE_STATUS):
            if self.patch:
                out["patch"] = base64.b64encode(orjson.dumps(self.patch)).decode("ascii")
                out["patchType"] = PATCH_TYPE
        elif op == INTERPRET_STATUS:
            out["rawStatus"] = self.raw_status if self.raw_status is not None else {}
        elif op == INTERPRET_HEALTH:
            out["healthy"] = bool(self.healthy)
        elif op == INTERPRET_DEPENDENCY:
            out["dependencies"] = self.dependencies or []
        return out


def failure(uid: str, message: str, code: int) -> dict[str, Any]:
    """Karmada's ``ResourceInterpreterResponse`` refusing the request."""
    return {"uid": uid, "successful": False, "status": {"message": message, "code": code}}


@dataclass(frozen=True)
class Request:
    """What an operation reads: the object, and per operation the observed object (Retain), the
    desired replicas (ReviseReplica) and the members' statuses (AggregateStatus)."""

    operation: str
    obj: Mapping[str, Any]
    observed: Mapping[str, Any] | None = None
    desired_replicas: int | None = None
    aggregated_status: Sequence[Mapping[str, Any]] = ()


def _namespace(obj: Mapping[str, Any]) -> str | None:
    ns = (obj.get("metadata") or {}).get("namespace")
    return ns if isinstance(ns, str) and ns else None


def _patch(old: Mapping[str, Any], new: Mapping[str, Any] | None) -> JsonPatch | None:
    return json_patch(dict(old), dict(new)) if new is not None else None


def _multi_instance(cd: CompiledDefinition) -> frozenset[str]:
    return frozenset(c.name for c in cd.components.values() if c.instance_id is not None)


def _replica(cd: CompiledDefinition, req: Request) -> Answer:
    needs = instance_needs(resolve(cd, req.obj))
    total, reqs = requirements.replica_answer(needs, _namespace(req.obj))
    if total > INT32_MAX:
        raise InterpretError(f"the workload asks for {total} pods, more than Karmada's int32 replicas hold")
    return Answer(INTERPRET_REPLICA, replicas=total, replica_requirements=reqs)


def _component(cd: CompiledDefinition, req: Request) -> Answer:
    needs = instance_needs(resolve(cd, req.obj))
    return Answer(INTERPRET_COMPONENT, components=requirements.components_answer(needs, _multi_instance(cd)))


def _revise(cd: CompiledDefinition, req: Request) -> Answer:
    count = req.desired_replicas
    if count is None or count < 0:
        raise InterpretError(f"ReviseReplica needs request.replicas >= 0, got {count!r}")
    needs = instance_needs(resolve(cd, req.obj))
    return Answer(REVISE_REPLICA, patch=_patch(req.obj, revise.revise(cd, req.obj, needs, count)))


def _retain(cd: CompiledDefinition, req: Request) -> Answer:
    if req.observed is None:
        raise InterpretError("Retain needs request.observedObject")
    return Answer(RETAIN, patch=_patch(req.obj, retain(cd, req.obj, req.observed)))


def _reflect(cd: CompiledDefinition, req: Request) -> Answer:
    return Answer(INTERPRET_STATUS, raw_status=status.reflect(req.obj))


def _aggregate(cd: CompiledDefinition, req: Request) -> Answer:
    return Answer(
        AGGREGATE_STATUS, patch=_patch(req.obj, status.aggregate(cd, req.obj, req.aggregated_status))
    )


def _health(cd: CompiledDefinition, req: Request) -> Answer:
    return Answer(INTERPRET_HEALTH, healthy=status.healthy(cd, req.obj))


def _dependency(cd: CompiledDefinition, req: Request) -> Answer:
    w = resolve(cd, req.obj)
    specs: list[Mapping[str, Any]] = []
    for comp in w.components.values():
        if not comp.has_pod_definition:
            continue
        for inst in comp.instances:
            spec = inst.spec.effective_pod_spec
            if spec is not None:
                specs.append(spec)
            elif inst.spec.fragmented is not None:
                frag = inst.spec.fragmented
                containers = list(frag.containers or []) + ([frag.container] if frag.container else [])
                specs.append({"containers": containers})
    return Answer(INTERPRET_DEPENDENCY, dependencies=dependencies(specs, _namespace(req.obj)))


_HANDLERS: dict[str, Callable[[CompiledDefinition, Request], Answer]] = {
    INTERPRET_REPLICA: _replica,
    INTERPRET_COMPONENT: _component,
    REVISE_REPLICA: _revise,
    RETAIN: _retain,
    INTERPRET_STATUS: _reflect,
    AGGREGATE_STATUS: _aggregate,
    INTERPRET_HEALTH: _health,
    INTERPRET_DEPENDENCY: _dependency,
}


def interpret(cd: CompiledDefinition, req: Request) -> Answer:
    """Answer ``req`` through ``cd``. Raises :class:`InterpretError` (an operation that cannot be
    answered for this object, with the reason) or another ``WorkloadMapError`` from the resolver."""
    handler = _HANDLERS.get(req.operation)
    if handler is None:
        raise InterpretError(f"operation {req.operation!r} is not one of {', '.join(OPERATIONS)}")
    try:
        return handler(cd, req)
    except InterpretError:
        raise
    except WorkloadMapError as exc:
        raise InterpretError(f"{req.operation}: {exc}") from exc
