"""Reading a namespace's Events, bounded: :data:`MAX_EVENTS` kept (the most recently seen),
500 per page, at most ``READ_FACTOR`` times that many read, so a namespace flooded with events
costs a fixed amount."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workload_map.kube.events import last_seen
from workload_map.kube.objects import api_path

if TYPE_CHECKING:
    from workload_map.cluster.client import KubeClient

__all__ = ["MAX_EVENTS", "read_events"]

MAX_EVENTS = 5000
PAGE = 500
#: Events read at most, as a multiple of the limit.
READ_FACTOR = 4


def read_events(client: KubeClient, namespace: str, *, limit: int = MAX_EVENTS) -> list[dict[str, Any]]:
    """The namespace's events (core/v1), the ``limit`` most recently seen when there are more.
    Raises the client's errors (:class:`~workload_map.errors.ForbiddenError`...)."""
    out: list[dict[str, Any]] = []
    read = 0
    for page in client.list(api_path("v1", "events", namespace), limit=PAGE):
        items = [i for i in page.get("items") or () if isinstance(i, dict)]
        out.extend(items)
        read += len(items)
        if len(out) > 2 * limit:
            out = sorted(out, key=last_seen)[-limit:]
        if read >= READ_FACTOR * limit:
            break  # a flood: what was read is what is shown
    return sorted(out, key=last_seen)[-limit:]
