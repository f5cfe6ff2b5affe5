"""Core/v1 Event vocabulary, without I/O: which object an event is about, when it happened, who
reported it, and kubectl describe's order. Events are untrusted JSON: every accessor tolerates
missing or mistyped fields."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workload_map.kube.objects import KubeObject

__all__ = ["about", "event_count", "first_seen", "involved", "last_seen", "sorted_events", "source"]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def involved(event: KubeObject) -> Mapping[str, Any]:
    ref = event.get("involvedObject")
    return ref if isinstance(ref, Mapping) else {}


def event_count(event: KubeObject) -> int:
    count = event.get("count")
    series = event.get("series")
    if isinstance(series, Mapping) and isinstance(series.get("count"), int):
        return int(series["count"])
    return count if isinstance(count, int) and not isinstance(count, bool) else 1


def first_seen(event: KubeObject) -> str:
    """``firstTimestamp``, else ``eventTime`` (events written through events.k8s.io), else the
    object's creation time."""
    meta = event.get("metadata")
    created = meta.get("creationTimestamp") if isinstance(meta, Mapping) else None
    return _text(event.get("firstTimestamp")) or _text(event.get("eventTime")) or _text(created)


def last_seen(event: KubeObject) -> str:
    series = event.get("series")
    observed = series.get("lastObservedTime") if isinstance(series, Mapping) else None
    return _text(event.get("lastTimestamp")) or _text(observed) or first_seen(event)


def source(event: KubeObject) -> str:
    """kubectl describe's FROM: ``source.component``, else ``reportingController``."""
    src = event.get("source")
    component = _text(src.get("component")) if isinstance(src, Mapping) else ""
    return component or _text(event.get("reportingController"))


def sorted_events(events: Iterable[KubeObject]) -> list[KubeObject]:
    """Oldest last-seen first, as kubectl describe lists them (timestamps are RFC 3339 in UTC,
    so text order is time order)."""
    return sorted(events, key=lambda e: (last_seen(e), first_seen(e)))


def about(events: Iterable[KubeObject], uids: set[str]) -> list[KubeObject]:
    """The events whose involved object is one of ``uids``, in kubectl's order."""
    return sorted_events(e for e in events if _text(involved(e).get("uid")) in uids)
