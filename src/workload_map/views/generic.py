"""The generic reading of a workload no definition covers, clearly marked as such (definition
and origin ``generic``): the phase from kstatus's rules (kube.kstatus.PHASE_OF), and the pods
and requested resources from the pods its owner chain reaches (one component, ``pods``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.kube.kstatus import GENERIC, PHASE_OF, KStatus, kstatus
from workload_map.kube.objects import labels_of, meta
from workload_map.resolve.pods import pod_info
from workload_map.views.model import (
    ComponentSummary,
    ComponentView,
    DescribeView,
    PodView,
    Replicas,
    WorkloadView,
    pod_view,
    total,
)

__all__ = ["generic_describe", "generic_view"]


def _pod_view(pod: Mapping[str, Any]) -> PodView:
    return pod_view(pod_info(pod, "pods"))


def generic_view(
    obj: Mapping[str, Any], pods: Sequence[Mapping[str, Any]] | None
) -> tuple[WorkloadView, KStatus]:
    """The row of ``obj`` with the pods it owns (``None``: pods not read)."""
    status = kstatus(obj)
    phase = PHASE_OF[status.status]
    m = meta(obj)
    views = [_pod_view(p) for p in pods or ()]
    resources = total(v.resources for v in views)
    ready = sum(1 for v in views if v.ready)
    components = (
        (ComponentSummary("pods", len(views), ready if pods is not None else None),)
        if pods is not None
        else ()
    )
    row = WorkloadView(
        name=str(m.get("name") or ""),
        namespace=str(m.get("namespace") or "") or None,
        kind=str(obj.get("kind") or ""),
        api_version=str(obj.get("apiVersion") or ""),
        created_at=m.get("creationTimestamp") if isinstance(m.get("creationTimestamp"), str) else None,
        definition=GENERIC,
        origin=GENERIC,
        phases=(phase,),
        primary_phase=phase,
        components=components,
        resources=resources,
        pods_ready=ready if pods is not None else None,
        pods_total=len(views) if pods is not None else None,
        uid=str(m.get("uid") or "") or None,
        labels=tuple(sorted(labels_of(obj).items())),
    )
    return row, status


def generic_describe(
    obj: Mapping[str, Any], pods: Sequence[Mapping[str, Any]] | None
) -> tuple[DescribeView, KStatus]:
    row, status = generic_view(obj, pods)
    views = tuple(_pod_view(p) for p in pods or ())
    comps: tuple[ComponentView, ...] = ()
    if pods is not None:
        res = total(v.resources for v in views)
        nodes = tuple(sorted({v.node for v in views if v.node}))
        ready = sum(1 for v in views if v.ready)
        comps = (
            ComponentView(
                name="pods",
                kind="Pod",
                replicas=Replicas(len(views), len(views), ready),
                resources=res,
                own_desired=len(views),
                own_resources=res,
                nodes=nodes,
                pods=views,
                pod_bearing=True,
            ),
        )
    reading = f"generic reading, no definition covers {row.kind}: kstatus {status.status}: {status.message}"
    view = DescribeView(
        view=row,
        file_mode=False,
        components=comps,
        resources=total(c.resources for c in comps),
        reading=reading,
    )
    return view, status
