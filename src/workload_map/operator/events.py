"""The body of a core/v1 Event the operator records (Karta conditions, gang controller reports)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any


def event_body(
    involved: Mapping[str, Any], namespace: str, reason: str, message: str, type_: str, component: str
) -> dict[str, Any]:
    """An Event about ``involved`` (apiVersion, kind, metadata) in ``namespace``; the message is cut
    to 1,024 characters."""
    meta = involved.get("metadata") or {}
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    ref = {
        "apiVersion": involved.get("apiVersion"),
        "kind": involved.get("kind"),
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "resourceVersion": meta.get("resourceVersion"),
    }
    if meta.get("namespace"):
        ref["namespace"] = meta.get("namespace")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{meta.get('name')}.", "namespace": namespace},
        "involvedObject": ref,
        "reason": reason,
        "message": message[:1024],
        "type": type_,
        "source": {"component": component},
        "reportingComponent": component,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
