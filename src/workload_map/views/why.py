"""Why a workload is in its phase, for ``describe``, the REST API and the web UI: the workload's
conditions with reasons, messages and ages; for each phase, the component and the status rule
that produced it (in ``wmap explain``'s words); the components still short of ready pods, with
the pods that hold them and kubectl's reason for each; and the recent Events of the workload,
its child objects and its pods, merged in kubectl describe's order."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from workload_map.kube import events as kube_events
from workload_map.model.definition import ResourceStatus
from workload_map.resolve.types import Workload
from workload_map.views.explain import matcher_text
from workload_map.views.format import age

__all__ = [
    "ConditionView",
    "EventView",
    "Holdup",
    "PhaseReason",
    "conditions_of",
    "event_views",
    "holdups",
    "phase_reasons",
]

#: Pods named per component that is short of ready pods.
HOLDUP_PODS = 3
#: Events shown (the newest; kubectl shows them all, but a big gang can log thousands).
MAX_EVENTS_SHOWN = 50

#: Phases in which no pod is expected to be ready: nothing is "waiting on" a pod then.
SETTLED = frozenset({"Completed", "Failed", "Suspended"})
#: Phases the text output explains (the JSON explains every phase).
EXPLAINED = frozenset({"Initializing", "Degraded", "Failed", "Suspending", "Resuming", "Undefined"})

#: Phases worth explaining for a child component (a root's phases are always explained).
_TROUBLE = frozenset(
    {ResourceStatus.INITIALIZING, ResourceStatus.DEGRADED, ResourceStatus.FAILED, ResourceStatus.SUSPENDING}
)


@dataclass(frozen=True)
class ConditionView:
    type: str
    status: str
    reason: str | None
    message: str | None
    last_transition: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "lastTransitionTime": self.last_transition,
        }


@dataclass(frozen=True)
class PhaseReason:
    """``phase`` comes from ``component``'s status rule ``rule`` (``statusMappings.<phase>[index]``)."""

    phase: str
    component: str
    kind: str | None
    rule: str
    index: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "component": self.component,
            "kind": self.kind,
            "rule": self.rule,
            "ruleIndex": self.index,
        }


@dataclass(frozen=True)
class HeldPod:
    name: str
    status: str
    message: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "message": self.message}


@dataclass(frozen=True)
class Holdup:
    """A component (or instance) with fewer ready pods than it wants, and the pods that hold it."""

    component: str
    ready: int
    desired: int
    pods: tuple[HeldPod, ...]
    more: int = 0
    #: desired pods that do not exist (yet)
    missing: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "ready": self.ready,
            "desired": self.desired,
            "pods": [p.to_dict() for p in self.pods],
            "morePods": self.more,
            "missingPods": self.missing,
        }


@dataclass(frozen=True)
class EventView:
    type: str
    reason: str
    object: str
    source: str
    message: str
    count: int
    first_seen: str
    last_seen: str

    def age(self, now: datetime | None = None) -> str:
        """kubectl describe's AGE: ``5m``, or ``2m (x7 over 10m)`` for a repeated event."""
        if self.count > 1:
            return f"{age(self.last_seen, now)} (x{self.count} over {age(self.first_seen, now)})"
        return age(self.first_seen, now)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "reason": self.reason,
            "object": self.object,
            "source": self.source,
            "message": self.message,
            "count": self.count,
            "firstTimestamp": self.first_seen,
            "lastTimestamp": self.last_seen,
        }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def conditions_of(workload: Workload, obj: Mapping[str, Any]) -> tuple[ConditionView, ...]:
    """The root's conditions as the definition reads them, with ``lastTransitionTime`` from the
    object's condition of the same type when it carries one."""
    root = workload.components[workload.tree.name]
    status = root.status
    if status is None:
        return ()
    raw = obj.get("status")
    items = raw.get("conditions") if isinstance(raw, Mapping) else None
    times: dict[str, str] = {}
    for item in items if isinstance(items, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("type"), str):
            when = _text(item.get("lastTransitionTime"))
            if when:
                times[item["type"]] = when
    return tuple(
        ConditionView(c.type, c.status, c.reason, c.message, times.get(c.type)) for c in status.conditions
    )


def phase_reasons(workload: Workload) -> tuple[PhaseReason, ...]:
    """For the root, every phase and its rule; for other components, the troubled phases."""
    out: list[PhaseReason] = []
    root_name = workload.tree.name
    for name, comp in workload.components.items():
        status = comp.status
        sd = comp.definition.status_definition
        if status is None or sd is None or not status.matched_by:
            continue
        kind = comp.definition.kind.kind if comp.definition.kind is not None else None
        for phase, index in zip(status.phases, status.matched_by, strict=False):
            if name != root_name and phase not in _TROUBLE:
                continue
            matchers = sd.status_mappings.matchers_for(phase)
            rule = matcher_text(matchers[index]) if index < len(matchers) else "?"
            out.append(PhaseReason(phase.value, name, kind or None, rule, index))
    return tuple(out)


def holdups(rows: Iterable[Any]) -> tuple[Holdup, ...]:
    """Pod-bearing rows (:class:`~workload_map.views.model.ComponentView`, walked with their
    children) with fewer ready pods than desired; each names up to :data:`HOLDUP_PODS` pods
    that are not ready, with kubectl's STATUS and the reason or scheduling message."""
    out: list[Holdup] = []

    def walk(items: Iterable[Any], within: str) -> None:
        for c in items:
            # "group[1]/worker": a component inside a per-replica row is named with that row
            label = f"{within}/{c.name}" if within else c.name
            if c.pod_bearing and c.replicas.ready < c.replicas.desired:
                unready = [p for p in c.pods if not p.ready and p.phase != "Succeeded"]
                held = tuple(
                    HeldPod(p.name, p.status or p.phase, p.message or p.reason) for p in unready[:HOLDUP_PODS]
                )
                more = max(0, len(unready) - HOLDUP_PODS)
                missing = max(0, c.replicas.desired - c.replicas.current)
                out.append(Holdup(label, c.replicas.ready, c.replicas.desired, held, more, missing))
            walk(c.children, c.name if c.replica_key is not None else within)

    walk(rows, "")
    return tuple(out)


def event_views(events: Sequence[Mapping[str, Any]]) -> tuple[EventView, ...]:
    """The newest :data:`MAX_EVENTS_SHOWN` of ``events`` (already filtered to the workload's
    objects), oldest first as kubectl describe prints them."""
    ordered = kube_events.sorted_events(events)[-MAX_EVENTS_SHOWN:]
    out = []
    for e in ordered:
        ref = kube_events.involved(e)
        obj = f"{_text(ref.get('kind')) or '?'}/{_text(ref.get('name')) or '?'}"
        out.append(
            EventView(
                type=_text(e.get("type")) or "",
                reason=_text(e.get("reason")) or "",
                object=obj,
                source=kube_events.source(e),
                message=(_text(e.get("message")) or "").strip(),
                count=kube_events.event_count(e),
                first_seen=kube_events.first_seen(e),
                last_seen=kube_events.last_seen(e),
            )
        )
    return tuple(out)
