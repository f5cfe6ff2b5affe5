"""The one view model of a resolved workload: rows for ``get`` and the tree for ``describe``.

Every output (table, wide table, tree, JSON, YAML) is a projection of these objects; the JSON
shapes keep upstream's ``View`` and ``DescribeView`` fields and only add fields (published as
``schemas/view.v1.json`` and ``schemas/describe-view.v1.json``).

Building rules (upstream-spec 3.8, with our additions):

* the root is a component of the tree only when it is pod-bearing; otherwise its children are
  the top-level components;
* a component whose instances carry an instance key (an ``instanceIdPath``) is a parent row with
  one child row per instance, named by the instance key; each instance sees only its pods;
* a component with a ``podSelector.replicaSelector`` whose pods (its own or its descendants')
  carry replica keys is a parent row (the whole component: totals, ``own_*``) with one child row
  per replica key seen, named ``<component>[<replicaKey>]`` (``replicaKey`` in JSON); below it the
  descendants see only the pods of that replica, and their desired replicas are per replica
  (divided by the component's desired replicas when it divides them). Without pods (file mode)
  there is no split;
* replicas: ``desired`` per pod-bearing instance is the resolved scale (``replicas``, else
  ``minReplicas``, else 1); rows with children add their children's; a childless grouping
  component counts only an explicitly declared scale. ``current`` = attributed pods, ``ready`` =
  pods with ``Ready=True``;
* a non-pod-bearing component that ends up empty (no pods, children, replicas, resources) is
  dropped;
* resources: a pod-bearing instance requests one pod's request x desired replicas; rows with
  children add their children's; the workload total is the sum over top-level components;
* pods no component claims are listed under ``unattributed`` with the reason (upstream drops
  them silently).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from workload_map.resolve.quantity import saturate

if TYPE_CHECKING:
    from workload_map.cost import WorkloadCost
    from workload_map.kube.podstatus import ContainerState
    from workload_map.resolve.pods import PodAttribution, PodInfo
    from workload_map.resolve.resources import ResourceTotals
    from workload_map.resolve.types import Component, ComponentNode, InstanceNode, Workload
    from workload_map.views.why import ConditionView, EventView, Holdup, PhaseReason

__all__ = [
    "ComponentSummary",
    "ComponentView",
    "DescribeView",
    "PodView",
    "Replicas",
    "Resources",
    "UnattributedPodView",
    "WorkloadView",
    "build_describe",
    "build_view",
    "component_summaries",
]

SCHEMA_VERSION = "v1"


@dataclass(frozen=True)
class Resources:
    """Requested resources: GPUs (whole GPUs, ``nvidia.com/gpu`` + ``amd.com/gpu``), CPU in
    millicores, memory in bytes and every other resource name under ``extended``."""

    gpus: int = 0
    cpu_millis: int = 0
    memory_bytes: int = 0
    extended: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, totals: ResourceTotals) -> Resources:
        return cls(totals.gpus, totals.cpu_millis, totals.memory_bytes, dict(totals.extended))

    def __add__(self, other: Resources) -> Resources:
        ext = dict(self.extended)
        for k, v in other.extended.items():
            ext[k] = ext.get(k, 0) + v
        return Resources(
            self.gpus + other.gpus,
            self.cpu_millis + other.cpu_millis,
            self.memory_bytes + other.memory_bytes,
            ext,
        )

    @property
    def is_empty(self) -> bool:
        return not (self.gpus or self.cpu_millis or self.memory_bytes or any(self.extended.values()))

    def to_dict(self) -> dict[str, Any]:
        """Machine form; numbers saturate at int64 as a Quantity's value does."""
        return {
            "gpus": saturate(self.gpus),
            "cpuMillis": saturate(self.cpu_millis),
            "memoryBytes": saturate(self.memory_bytes),
            "extended": {k: saturate(v) for k, v in sorted(self.extended.items())},
        }


NO_RESOURCES = Resources()


def total(items: Iterable[Resources]) -> Resources:
    out = NO_RESOURCES
    for r in items:
        out = out + r
    return out


@dataclass(frozen=True)
class ComponentSummary:
    """One entry of a ``get`` row's components summary: a pod-bearing component (or one of its
    instances), its desired pods and, when pods were listed, its ready pods."""

    name: str
    desired: int
    ready: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ready": self.ready, "desired": self.desired}


@dataclass(frozen=True)
class WorkloadView:
    """A ``get`` row (upstream's ``View`` plus ``primaryPhase``, ``components``, ``resources``
    and, when pods were listed, ``pods``)."""

    name: str
    namespace: str | None
    kind: str
    api_version: str
    created_at: str | None
    definition: str
    origin: str
    phases: tuple[str, ...]
    primary_phase: str
    components: tuple[ComponentSummary, ...] = ()
    resources: Resources = NO_RESOURCES
    pods_ready: int | None = None
    pods_total: int | None = None
    uid: str | None = None
    #: Why the workload could not be resolved (the row then says Undefined and has no components).
    error: str | None = None
    #: The workload object's labels (``--show-labels``, ``-L``).
    labels: tuple[tuple[str, str], ...] = ()
    #: GPU-hours and cost from Prometheus, when a Prometheus URL is configured (workload_map.cost).
    cost: WorkloadCost | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace or "",
            "kind": self.kind,
            "apiVersion": self.api_version,
            "createdAt": self.created_at,
            "definition": self.definition,
            "origin": self.origin,
            "phases": list(self.phases),
            "primaryPhase": self.primary_phase,
            "components": [c.to_dict() for c in self.components],
            "resources": self.resources.to_dict(),
            "labels": dict(self.labels),
        }
        if self.pods_total is not None:
            out["pods"] = {"ready": self.pods_ready or 0, "total": self.pods_total}
        if self.error is not None:
            out["error"] = self.error
        if self.cost is not None:
            out["cost"] = self.cost.to_dict()
        return out


@dataclass(frozen=True)
class PodView:
    """A pod row: ``status``/``restarts`` as kubectl prints them; ``message`` the scheduler's
    word on a pod it could not place; ``containers`` each container's state."""

    name: str
    phase: str
    ready: bool
    node: str | None
    reason: str | None
    resources: Resources
    status: str = ""
    restarts: int = 0
    message: str | None = None
    containers: tuple[ContainerState, ...] = ()
    #: kubectl's READINESS GATES (``1/2``); ``None`` without gates
    readiness_gates: str | None = None

    @property
    def unhealthy(self) -> bool:
        return not self.ready and self.phase != "Succeeded"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "phase": self.phase, "ready": self.ready, "node": self.node}
        if self.reason:
            out["reason"] = self.reason
        out["status"] = self.status or self.phase
        out["restarts"] = self.restarts
        if self.message:
            out["message"] = self.message
        if self.containers:
            out["containers"] = [c.to_dict() for c in self.containers]
        if self.readiness_gates:
            out["readinessGates"] = self.readiness_gates
        out["resources"] = self.resources.to_dict()
        return out


@dataclass(frozen=True)
class Replicas:
    desired: int = 0
    current: int = 0
    ready: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"desired": self.desired, "current": self.current, "ready": self.ready}


@dataclass(frozen=True)
class ComponentView:
    """A row of the tree: a component, or one instance of a multi-instance component.

    ``own_desired``/``own_resources`` exclude the children (the ``Resources:`` table uses them);
    ``grouping`` marks rows that only group their children (skipped in that table)."""

    name: str
    kind: str | None
    replicas: Replicas
    resources: Resources
    own_desired: int
    own_resources: Resources
    nodes: tuple[str, ...] = ()
    pods: tuple[PodView, ...] = ()
    children: tuple[ComponentView, ...] = ()
    pod_bearing: bool = False
    grouping: bool = False
    replica_key: str | None = None
    # Set on a row split into replica rows: its children as components (not per replica), what
    # the ``Resources:`` table lists. ``None`` for rows that are not split.
    component_rows: tuple[ComponentView, ...] | None = None

    @property
    def unhealthy_pods(self) -> int:
        return sum(1 for p in self.pods if p.unhealthy)

    def any_unhealthy(self) -> bool:
        return self.unhealthy_pods > 0 or any(c.any_unhealthy() for c in self.children)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.kind is not None and not self.grouping:
            out["kind"] = self.kind
        if self.replica_key is not None:
            out["replicaKey"] = self.replica_key
        out["replicas"] = self.replicas.to_dict()
        out["resources"] = self.resources.to_dict()
        if self.nodes:
            out["nodes"] = list(self.nodes)
        if self.pods:
            out["pods"] = [p.to_dict() for p in self.pods]
        if self.children:
            out["children"] = [c.to_dict() for c in self.children]
        return out


@dataclass(frozen=True)
class UnattributedPodView:
    name: str
    reason: str
    phase: str | None = None
    node: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "reason": self.reason, "phase": self.phase, "node": self.node}


@dataclass(frozen=True)
class DescribeView:
    """``describe``: the row fields plus the tree, totals, file mode and unattributed pods."""

    view: WorkloadView
    file_mode: bool
    components: tuple[ComponentView, ...]
    resources: Resources
    unattributed: tuple[UnattributedPodView, ...] = ()
    #: file mode: the manifest carries a ``status`` (the phase is read from it, pods are not)
    manifest_status: bool = False
    #: why it is in its phase (views.why)
    conditions: tuple[ConditionView, ...] = ()
    phase_reasons: tuple[PhaseReason, ...] = ()
    holdups: tuple[Holdup, ...] = ()
    #: ``None``: events not read (file mode, ``--show-events=false``, not allowed)
    events: tuple[EventView, ...] | None = None
    #: a generic reading (views.generic): kstatus's word and message behind the phase
    reading: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = self.view.to_dict()
        out["fileMode"] = self.file_mode
        if self.file_mode:
            out["manifestStatus"] = self.manifest_status
        out["resources"] = self.resources.to_dict()
        out["components"] = [c.to_dict() for c in self.components]
        out["unattributed"] = [u.to_dict() for u in self.unattributed]
        out["conditions"] = [c.to_dict() for c in self.conditions]
        out["phaseReasons"] = [r.to_dict() for r in self.phase_reasons]
        out["waitingOn"] = [h.to_dict() for h in self.holdups]
        out["events"] = None if self.events is None else [e.to_dict() for e in self.events]
        if self.reading is not None:
            out["reading"] = self.reading
        return out


# --- building ------------------------------------------------------------------------------------


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _kind_name(comp: Component) -> str | None:
    kind = comp.definition.kind
    return kind.kind if kind is not None and kind.kind else None


def component_summaries(
    workload: Workload, attribution: PodAttribution | None = None
) -> tuple[ComponentSummary, ...]:
    """Pod-bearing components (per instance for multi-instance ones), in declaration order."""
    ready: dict[tuple[str, str], int] = {}
    if attribution is not None:
        for cp in attribution.components:
            for ip in cp.instances:
                ready[(cp.name, ip.instance_id)] = ip.ready
    out: list[ComponentSummary] = []
    for comp in workload.components.values():
        if not comp.has_pod_definition:
            continue
        multi = comp.definition.instance_id_path is not None
        for inst in comp.instances:
            name = inst.id if multi and inst.id else comp.name
            r = ready.get((comp.name, inst.id)) if attribution is not None else None
            if attribution is not None and r is None:
                r = 0
            out.append(ComponentSummary(name, inst.scale.desired, r))
    return tuple(out)


def build_view(
    workload: Workload,
    obj: Mapping[str, Any],
    *,
    definition: str,
    origin: str,
    attribution: PodAttribution | None = None,
) -> WorkloadView:
    """The ``get`` row of a resolved workload (pods optional: they fill the ready counts)."""
    meta = _meta(obj)
    created = meta.get("creationTimestamp")
    pods_total = pods_ready = None
    if attribution is not None:
        pods = attribution.pods
        pods_total = len(pods)
        pods_ready = sum(1 for p in pods if p.ready)
    return WorkloadView(
        name=str(meta.get("name") or workload.name or ""),
        namespace=(str(meta["namespace"]) if meta.get("namespace") else None),
        kind=str(obj.get("kind") or workload.kind or ""),
        api_version=str(obj.get("apiVersion") or workload.api_version or ""),
        created_at=created if isinstance(created, str) and created else None,
        definition=definition,
        origin=origin,
        phases=tuple(p.value for p in workload.phases) or ("Undefined",),
        primary_phase=workload.primary_phase.value,
        components=component_summaries(workload, attribution),
        resources=Resources.of(workload.resources),
        pods_ready=pods_ready,
        pods_total=pods_total,
        uid=str(meta["uid"]) if meta.get("uid") else None,
        labels=_labels(meta),
    )


def _labels(meta: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    labels = meta.get("labels")
    if not isinstance(labels, Mapping):
        return ()
    return tuple(sorted((str(k), str(v)) for k, v in labels.items()))


def error_view(obj: Mapping[str, Any], *, definition: str, origin: str, error: str) -> WorkloadView:
    """The row of a workload that could not be resolved: kept in lists, marked with the reason."""
    meta = _meta(obj)
    created = meta.get("creationTimestamp")
    return WorkloadView(
        name=str(meta.get("name") or ""),
        namespace=(str(meta["namespace"]) if meta.get("namespace") else None),
        kind=str(obj.get("kind") or ""),
        api_version=str(obj.get("apiVersion") or ""),
        created_at=created if isinstance(created, str) and created else None,
        definition=definition,
        origin=origin,
        phases=("Undefined",),
        primary_phase="Undefined",
        uid=str(meta["uid"]) if meta.get("uid") else None,
        error=error,
        labels=_labels(meta),
    )


def pod_view(p: PodInfo) -> PodView:
    """The row of one attributed pod."""
    return PodView(
        p.name,
        p.phase or "Unknown",
        p.ready,
        p.node,
        p.reason,
        Resources.of(p.resources),
        p.status,
        p.restarts,
        p.message,
        p.containers,
        p.readiness_gates,
    )


@dataclass(frozen=True)
class _Replica:
    """The replica context of a subtree: the component with the ``replicaSelector``, the key
    and that component's desired replicas (per-replica counts divide by it)."""

    component: str
    key: str
    count: int

    def per_replica(self, desired: int) -> int:
        return desired // self.count if self.count > 0 and desired % self.count == 0 else desired


class _Builder:
    def __init__(self, workload: Workload, attribution: PodAttribution | None) -> None:
        self.w = workload
        self.attribution = attribution
        self.pods: dict[tuple[str, str], list[PodInfo]] = {}
        self.replicated_by: dict[str, str | None] = {}
        if attribution is not None:
            for cp in attribution.components:
                self.replicated_by[cp.name] = cp.replicated_by
                for ip in cp.instances:
                    self.pods[(cp.name, ip.instance_id)] = list(ip.pods)

    def component(self, node: ComponentNode, replica: _Replica | None = None) -> ComponentView | None:
        comp = self.w.components[node.name]
        multi = comp.definition.instance_id_path is not None
        if not multi and len(node.instances) == 1:
            return self.instance(comp.name, comp, node.instances[0], replica)
        if not multi and not node.instances:
            return self.finish(comp.name, comp, None, [], [], replica)
        kids = [self.instance(i.instance.id or comp.name, comp, i, replica) for i in node.instances]
        children = tuple(k for k in kids if k is not None)
        return self.group(comp.name, _kind_name(comp), children)

    def instance(
        self, name: str, comp: Component, inode: InstanceNode, replica: _Replica | None
    ) -> ComponentView | None:
        """The instance's row, split into one child row per replica key when the component has
        a ``replicaSelector`` and its pods carry keys."""
        whole = self.row(name, comp, inode, replica)
        keys = self.attribution.replica_keys(comp.name) if self.attribution is not None else ()
        if comp.has_pod_definition:  # only the keys of this instance's own pods
            own = {p.replica_key for p in self.pods.get((comp.name, inode.instance.id), [])}
            keys = tuple(k for k in keys if k in own)
        if whole is None or not keys or (replica is not None and replica.component == comp.name):
            return whole
        # How many replicas share the desired count: an ancestor that creates the replicas (an
        # LWS) counts them in its own scale; a pod-bearing component with its own selector (a
        # Grove clique, a Dynamo component) counts pods, so the replicas are the keys seen.
        count = len(keys) if comp.has_pod_definition else inode.instance.scale.desired
        rows = (self.row(f"{name}[{k}]", comp, inode, _Replica(comp.name, k, count)) for k in keys)
        split = tuple(r for r in rows if r is not None)
        return replace(whole, pods=(), children=split, component_rows=whole.children)

    def row(
        self, name: str, comp: Component, inode: InstanceNode, replica: _Replica | None
    ) -> ComponentView | None:
        children = [c for c in (self.component(n, replica) for n in inode.children) if c is not None]
        pods = self.pods.get((comp.name, inode.instance.id), []) if comp.has_pod_definition else []
        if replica is not None and self.replicated_by.get(comp.name) == replica.component:
            pods = [p for p in pods if p.replica_key == replica.key]
        view = self.finish(name, comp, inode, pods, children, replica)
        if view is not None and replica is not None and replica.component == comp.name:
            view = replace(view, replica_key=replica.key)
        return view

    def finish(
        self,
        name: str,
        comp: Component,
        inode: InstanceNode | None,
        pods: Sequence[PodInfo],
        children: Sequence[ComponentView],
        replica: _Replica | None = None,
    ) -> ComponentView | None:
        inst = inode.instance if inode is not None else None
        pod_views = tuple(pod_view(p) for p in pods)
        if comp.has_pod_definition and inst is not None:
            own_desired = inst.scale.desired
            own_res = Resources.of(inst.resources)
            if replica is not None:
                own_desired = replica.per_replica(own_desired)
                own_res = Resources.of(inst.pod_resources.times(own_desired))
        elif inst is not None and not children and not inst.scale.is_empty:
            own_desired = inst.scale.desired  # an explicitly declared scale on a childless group
            own_res = NO_RESOURCES
            if replica is not None:
                own_desired = replica.per_replica(own_desired)
        else:
            own_desired = 0
            own_res = NO_RESOURCES
        desired = own_desired + sum(c.replicas.desired for c in children)
        current = len(pod_views) + sum(c.replicas.current for c in children)
        ready = sum(1 for p in pod_views if p.ready) + sum(c.replicas.ready for c in children)
        resources = own_res + total(c.resources for c in children)
        nodes = sorted({p.node for p in pod_views if p.node} | {n for c in children for n in c.nodes})
        if (
            not comp.has_pod_definition
            and not pod_views
            and not children
            and not desired
            and resources.is_empty
        ):
            return None
        grouping = bool(children) and not comp.has_pod_definition
        return ComponentView(
            name=name,
            kind=_kind_name(comp),
            replicas=Replicas(desired, current, ready),
            resources=resources,
            own_desired=own_desired,
            own_resources=own_res,
            nodes=tuple(nodes),
            pods=pod_views,
            children=tuple(children),
            pod_bearing=comp.has_pod_definition,
            grouping=grouping,
        )

    def group(self, name: str, kind: str | None, children: tuple[ComponentView, ...]) -> ComponentView | None:
        if not children:
            return None
        return ComponentView(
            name=name,
            kind=kind,
            replicas=Replicas(
                sum(c.replicas.desired for c in children),
                sum(c.replicas.current for c in children),
                sum(c.replicas.ready for c in children),
            ),
            resources=total(c.resources for c in children),
            own_desired=0,
            own_resources=NO_RESOURCES,
            nodes=tuple(sorted({n for c in children for n in c.nodes})),
            children=children,
            grouping=True,
        )


def build_describe(
    workload: Workload,
    obj: Mapping[str, Any],
    *,
    definition: str,
    origin: str,
    attribution: PodAttribution | None = None,
    file_mode: bool = False,
    unattributed_pods: Mapping[str, Mapping[str, Any]] | None = None,
    events: Sequence[Mapping[str, Any]] | None = None,
) -> DescribeView:
    """The ``describe`` view: the tree of :class:`ComponentView` rows with pods (live) or without
    (file mode). ``unattributed_pods`` (name -> pod object) adds phase and node to the
    unattributed section; ``events`` are the events about the workload's objects (views.why)."""
    from workload_map.views import why

    b = _Builder(workload, attribution)
    root = workload.components[workload.tree.name]
    top: list[ComponentView] = []
    if root.has_pod_definition:
        view = b.component(workload.tree)
        if view is not None:
            top.append(view)
    else:
        for inode in workload.tree.instances:
            for child in inode.children:
                view = b.component(child)
                if view is not None:
                    top.append(view)
    unattributed: list[UnattributedPodView] = []
    if attribution is not None:
        from workload_map.resolve.pods import pod_status

        for u in attribution.unattributed:
            phase = node = None
            pod = (unattributed_pods or {}).get(u.name)
            if pod is not None:
                phase, _, _, node = pod_status(pod)
            unattributed.append(UnattributedPodView(u.name, u.reason, phase, node))
    row = build_view(workload, obj, definition=definition, origin=origin, attribution=attribution)
    if file_mode:
        row = WorkloadView(**{**row.__dict__, "pods_ready": None, "pods_total": None})
    return DescribeView(
        view=row,
        file_mode=file_mode,
        manifest_status=file_mode and isinstance(obj.get("status"), Mapping) and bool(obj.get("status")),
        components=tuple(top),
        resources=total(c.resources for c in top),
        unattributed=tuple(unattributed),
        conditions=why.conditions_of(workload, obj),
        phase_reasons=why.phase_reasons(workload),
        holdups=() if file_mode or set(row.phases) & why.SETTLED else why.holdups(top),
        events=None if events is None else why.event_views(events),
    )
