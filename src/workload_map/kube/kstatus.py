"""The generic status of any Kubernetes object, by kstatus's rules (sigs.k8s.io/cli-utils
``pkg/kstatus``), without I/O: for types no definition covers.

In order: ``metadata.deletionTimestamp`` -> Terminating; ``status.observedGeneration`` behind
``metadata.generation`` -> InProgress; a ``Reconciling=True`` condition -> InProgress; a
``Stalled=True`` condition -> Failed; a ``Ready`` condition -> Current when True, InProgress when
False; otherwise Current (an object that reports nothing is taken as it is).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from workload_map.kube.objects import KubeObject, meta

__all__ = ["GENERIC", "PHASE_OF", "KStatus", "kstatus"]

#: The definition and origin a workload read generically carries (views.generic, the exporter).
GENERIC = "generic"
#: kstatus's word -> the shared phase it stands for.
PHASE_OF = {
    "Current": "Running",
    "InProgress": "Initializing",
    "Failed": "Failed",
    "Terminating": "Undefined",
}

Word = Literal["Current", "InProgress", "Failed", "Terminating"]


@dataclass(frozen=True)
class KStatus:
    """kstatus's word for the object and the message saying why."""

    status: Word
    message: str


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _conditions(status: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    items = status.get("conditions")
    out: dict[str, Mapping[str, Any]] = {}
    for c in items if isinstance(items, list) else ():
        if isinstance(c, Mapping) and isinstance(c.get("type"), str):
            out[c["type"]] = c
    return out


def _said(cond: Mapping[str, Any], default: str) -> str:
    for key in ("message", "reason"):
        value = cond.get(key)
        if isinstance(value, str) and value:
            return value
    return default


def kstatus(obj: KubeObject) -> KStatus:
    m = meta(obj)
    if m.get("deletionTimestamp"):
        return KStatus("Terminating", "Resource scheduled for deletion")
    raw = obj.get("status")
    status = raw if isinstance(raw, Mapping) else {}
    generation, observed = _int(m.get("generation")), _int(status.get("observedGeneration"))
    if generation is not None and observed is not None and observed < generation:
        return KStatus("InProgress", f"Resource generation {generation}, observed generation {observed}")
    conds = _conditions(status)
    reconciling = conds.get("Reconciling")
    if reconciling is not None and reconciling.get("status") == "True":
        return KStatus("InProgress", _said(reconciling, "Reconciling"))
    stalled = conds.get("Stalled")
    if stalled is not None and stalled.get("status") == "True":
        return KStatus("Failed", _said(stalled, "Stalled"))
    ready = conds.get("Ready")
    if ready is not None:
        if ready.get("status") == "True":
            return KStatus("Current", _said(ready, "Resource is Ready"))
        return KStatus("InProgress", _said(ready, "Resource is not Ready"))
    return KStatus("Current", "Resource is current")
