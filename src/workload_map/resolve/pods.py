"""Live pods attributed to a workload's components and instances.

Ownership first (spec 3.8): a pod belongs to the workload when, climbing owner references at
most 6 levels, some reference carries the workload's UID; at each level without such a reference
the single ``controller: true`` reference is followed through a caller-supplied
:data:`OwnerLookup` (cached, misses included). A missing owner, no controller reference or a
lookup that fails means "not owned". Selectors never decide membership.

Then placement (spec 3.5 primitives): the first pod-bearing component (declaration order, root
first) whose component type selector matches claims the pod; a component without a type
selector claims every pod only when it is the only pod-bearing component. The instance comes from
``componentInstanceSelector`` and the replica key from the nearest ``replicaSelector`` (the
component's own or an ancestor's; :attr:`ComponentPods.replicated_by` names that component and
:meth:`PodAttribution.replica_keys` lists the keys seen, for per-replica views).
**Unlike upstream**, a pod whose selector query fails (a
missing label, several results, an id that is not an instance) does not fail the workload: it
goes to :attr:`PodAttribution.unattributed` with the reason, as do pods no component claims.

Counts: ``desired`` per instance is the resolved scale's desired replicas (``replicas``, else
``minReplicas``, else 1); ``current`` the attributed pods; ``ready`` those with ``Ready=True``.
Grouping components roll their children up.

``detail=False`` (the exporter, which reads only names, readiness, nodes and the counts) attributes
and counts the same way but leaves each :class:`PodInfo`'s display fields (kubectl's status and
restarts, the not-ready message, containers, readiness gates, requests) unset: they cost most of
the attribution's time at 100,000 pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workload_map.errors import ResolveError
from workload_map.kube.owners import MAX_OWNER_DEPTH, OwnerLookup, owned_by
from workload_map.kube.podstatus import (
    ContainerState,
    containers,
    not_ready_message,
    readiness_gates,
    status_and_restarts,
)
from workload_map.resolve._podquery import (
    PodQueryError,
    has_type_selector,
    matches_component_type,
    matching_instance_id,
    pod_name,
    single_value,
)
from workload_map.resolve.compiled import CompiledDefinition, CompiledExpression, Definition, as_compiled
from workload_map.resolve.extract import scales_by_id
from workload_map.resolve.resources import EMPTY_TOTALS, ResourceTotals, pod_spec_totals, sum_totals


def _meta(obj: Any) -> Mapping[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, (dict, Mapping)) else None
    return meta if isinstance(meta, (dict, Mapping)) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class OwnerResolver:
    """Decides whether pods belong to a workload by climbing owner references (cached)."""

    def __init__(self, lookup: OwnerLookup | None = None, max_depth: int = MAX_OWNER_DEPTH) -> None:
        self._lookup = lookup
        self._max_depth = max_depth
        self._cache: dict[tuple[str, str, str, str], Mapping[str, Any] | None] = {}

    def _fetch(self, key: tuple[str, str, str, str]) -> Mapping[str, Any] | None:
        if key in self._cache:
            return self._cache[key]
        found: Mapping[str, Any] | None = None
        if self._lookup is not None:
            try:
                result = self._lookup(*key)
            except Exception:  # an unreadable owner means "not owned" (spec 3.8)
                result = None
            found = result if isinstance(result, Mapping) else None
        self._cache[key] = found
        return found

    def owned_by(self, pod: Mapping[str, Any], root_uid: str) -> bool:
        def lookup(namespace: str, api_version: str, kind: str, name: str) -> Mapping[str, Any] | None:
            return self._fetch((namespace, api_version, kind, name))

        return owned_by(pod, root_uid, lookup, max_depth=self._max_depth)


def belongs_to(
    pod: Mapping[str, Any], workload: Mapping[str, Any], lookup: OwnerLookup | None = None
) -> bool:
    """Whether ``pod`` is owned (directly or through controllers) by ``workload``."""
    uid = _str(_meta(workload).get("uid"))
    return uid is not None and isinstance(pod, Mapping) and OwnerResolver(lookup).owned_by(pod, uid)


# --- results --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodInfo:
    """One attributed pod. ``reason`` explains a pod that is not ready (``Unschedulable``...)."""

    name: str
    namespace: str | None
    component: str
    instance_id: str
    replica_key: str | None
    phase: str | None
    ready: bool
    reason: str | None
    node: str | None
    resources: ResourceTotals
    #: kubectl's STATUS (``CrashLoopBackOff``, ``Init:0/2``...) and RESTARTS (kube.podstatus)
    status: str = ""
    restarts: int = 0
    #: why it is not ready: the scheduler's message, or the readiness gates holding it
    message: str | None = None
    #: kubectl's READINESS GATES (``1/2``), ``None`` when the pod has none
    readiness_gates: str | None = None
    containers: tuple[ContainerState, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "component": self.component,
            "instanceId": self.instance_id,
            "replicaKey": self.replica_key,
            "phase": self.phase,
            "ready": self.ready,
            "reason": self.reason,
            "node": self.node,
            "resources": self.resources.to_dict(),
            "status": self.status,
            "restarts": self.restarts,
            "message": self.message,
            "readinessGates": self.readiness_gates,
            "containers": [c.to_dict() for c in self.containers],
        }


@dataclass(frozen=True)
class UnattributedPod:
    name: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "reason": self.reason}


@dataclass(frozen=True)
class InstancePods:
    instance_id: str
    desired: int
    pods: tuple[PodInfo, ...]

    @property
    def current(self) -> int:
        return len(self.pods)

    @property
    def ready(self) -> int:
        return sum(1 for p in self.pods if p.ready)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.instance_id,
            "desired": self.desired,
            "current": self.current,
            "ready": self.ready,
            "pods": [p.to_dict() for p in self.pods],
        }


@dataclass(frozen=True)
class ComponentPods:
    """Pods of one component: per instance for pod-bearing components; grouping components
    (``instances == ()``) carry their descendants' totals."""

    name: str
    has_pod_definition: bool
    instances: tuple[InstancePods, ...]
    desired: int
    current: int
    ready: int
    nodes: tuple[str, ...]
    replicated_by: str | None = None
    """The component (this one or the nearest ancestor) whose ``replicaSelector`` gives the
    replica keys of this component's pods; ``None`` when there is none."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "hasPodDefinition": self.has_pod_definition,
            "desired": self.desired,
            "current": self.current,
            "ready": self.ready,
            "nodes": list(self.nodes),
            "instances": [i.to_dict() for i in self.instances],
            "replicatedBy": self.replicated_by,
        }


@dataclass(frozen=True)
class PodAttribution:
    components: tuple[ComponentPods, ...]
    unattributed: tuple[UnattributedPod, ...]
    not_owned: tuple[str, ...]
    #: ``False`` when attributed with ``detail=False``: the pods' display fields are unset
    detailed: bool = True

    def component(self, name: str) -> ComponentPods | None:
        for c in self.components:
            if c.name == name:
                return c
        return None

    @property
    def pods(self) -> tuple[PodInfo, ...]:
        return tuple(p for c in self.components for i in c.instances for p in i.pods)

    def replica_keys(self, component: str) -> tuple[str, ...]:
        """The distinct replica keys of the pods whose key comes from ``component``'s
        ``replicaSelector`` (its own pods and its descendants'), numbers in numeric order first,
        then other keys in text order."""
        keys = {
            p.replica_key
            for c in self.components
            if c.replicated_by == component
            for i in c.instances
            for p in i.pods
            if p.replica_key is not None
        }
        return tuple(sorted(keys, key=lambda k: (0, int(k), k) if k.isascii() and k.isdigit() else (1, 0, k)))

    @property
    def resources(self) -> ResourceTotals:
        """Requests of the attributed pods."""
        if not self.detailed:  # they were not read: zeros would pass for a real total
            raise ValueError("pod requests are not read by an attribution without detail")
        return sum_totals(p.resources for p in self.pods)

    def to_dict(self) -> dict[str, Any]:
        return {
            "components": [c.to_dict() for c in self.components],
            "unattributed": [u.to_dict() for u in self.unattributed],
            "notOwned": list(self.not_owned),
        }


# --- pod status ----------------------------------------------------------------------------------


def _conditions(pod: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    status = pod.get("status")
    conds = status.get("conditions") if isinstance(status, (dict, Mapping)) else None
    out: dict[str, Mapping[str, Any]] = {}
    for c in conds if isinstance(conds, list) else ():
        if isinstance(c, (dict, Mapping)) and isinstance(c.get("type"), str):
            out[c["type"]] = c
    return out


def pod_status(pod: Mapping[str, Any]) -> tuple[str | None, bool, str | None, str | None]:
    """``(phase, ready, reason, node)`` of a pod; ``reason`` only when not ready: the
    ``PodScheduled=False`` reason, else ``status.reason``, else the ``Ready=False`` reason."""
    status = pod.get("status")
    status = status if isinstance(status, (dict, Mapping)) else {}
    spec = pod.get("spec")
    spec = spec if isinstance(spec, (dict, Mapping)) else {}
    conds = _conditions(pod)
    ready = conds.get("Ready", {}).get("status") == "True"
    reason: str | None = None
    if not ready:
        sched = conds.get("PodScheduled", {})
        rdy = conds.get("Ready", {})
        if sched.get("status") == "False" and _str(sched.get("reason")):
            reason = sched["reason"]
        elif _str(status.get("reason")):
            reason = status["reason"]
        elif rdy.get("status") == "False" and _str(rdy.get("reason")):
            reason = rdy["reason"]
    return _str(status.get("phase")), ready, reason, _str(spec.get("nodeName"))


def pod_info(
    pod: Mapping[str, Any],
    component: str,
    instance_id: str = "",
    replica_key: str | None = None,
    *,
    detail: bool = True,
) -> PodInfo:
    """``pod`` as a :class:`PodInfo` of ``component``: its phase, readiness and the reason, and
    with ``detail`` also kubectl's STATUS and RESTARTS, why it is not ready, containers,
    readiness gates and requests (without, those keep their empty defaults)."""
    phase, ready, reason, node = pod_status(pod)
    name = pod_name(pod)
    namespace = _str(_meta(pod).get("namespace"))
    if not detail:
        return PodInfo(
            name, namespace, component, instance_id, replica_key, phase, ready, reason, node, EMPTY_TOTALS
        )
    shown, restart_count = status_and_restarts(pod)
    return PodInfo(
        name=name,
        namespace=namespace,
        component=component,
        instance_id=instance_id,
        replica_key=replica_key,
        phase=phase,
        ready=ready,
        reason=reason,
        node=node,
        resources=pod_resources(pod),
        status=shown,
        restarts=restart_count,
        message=not_ready_message(pod),
        containers=containers(pod),
        readiness_gates=_gates_text(pod),
    )


def _gates_text(pod: Mapping[str, Any]) -> str | None:
    ready, total, _ = readiness_gates(pod)
    return f"{ready}/{total}" if total else None


def pod_resources(pod: Mapping[str, Any]) -> ResourceTotals:
    """The requests of ``pod`` (its spec's; none when they cannot be read)."""
    try:
        return pod_spec_totals(pod.get("spec"))
    except ResolveError:
        return EMPTY_TOTALS


# --- attribution -----------------------------------------------------------------------------------


def _replica_source(cd: CompiledDefinition, component: str) -> tuple[str, CompiledExpression] | None:
    """``(component, keyPath)`` of the nearest ``replicaSelector`` (own, else an ancestor's)."""
    for comp in (cd.component(component), *cd.ancestors_of(component)):
        ps = comp.pod_selector
        if ps is not None and ps.replica_key is not None:
            return comp.name, ps.replica_key
    return None


def _claim(cd: CompiledDefinition, pod_bearing: list[str], pod: Mapping[str, Any]) -> str:
    for name in pod_bearing:
        comp = cd.component(name)
        if has_type_selector(comp):
            try:
                if matches_component_type(comp, pod):
                    return name
            except PodQueryError as exc:
                raise PodQueryError(f"component {name!r} type selector: {exc}") from exc
    if len(pod_bearing) == 1 and not has_type_selector(cd.component(pod_bearing[0])):
        return pod_bearing[0]
    raise PodQueryError("no component's type selector matches the pod")


def attribute_pods(
    definition: Definition,
    obj: Mapping[str, Any],
    pods: Iterable[Mapping[str, Any]],
    *,
    owner_lookup: OwnerLookup | None = None,
    check_ownership: bool = True,
    detail: bool = True,
) -> PodAttribution:
    """Attribute live pods to the components and instances of the workload ``obj``.

    With ``check_ownership`` (default) pods not owned by ``obj`` (see :class:`OwnerResolver`) are
    left out and listed by name in ``not_owned``; pass ``False`` when the pods are already scoped.
    ``detail=False`` leaves the pods' display fields unset (module doc; :func:`pod_info`).
    Raises only :class:`~workload_map.errors.WorkloadMapError` subclasses, and only for problems
    of the workload object itself (e.g. scales that cannot be read), never because of one pod.
    """
    cd = as_compiled(definition)
    if not isinstance(obj, Mapping):
        raise ResolveError(f"workload object must be a JSON object, got {type(obj).__name__}")
    uid = _str(_meta(obj).get("uid"))
    if check_ownership and uid is None:
        raise ResolveError("workload object has no metadata.uid: cannot check pod ownership")
    resolver = OwnerResolver(owner_lookup)
    pod_bearing = [name for name, c in cd.components.items() if c.has_pod_definition]
    per_instance_scale = {name: scales_by_id(cd.component(name), cd.name, obj) for name in pod_bearing}
    instance_ids = {name: tuple(scales) for name, scales in per_instance_scale.items()}
    replica_sources = {name: _replica_source(cd, name) for name in cd.components}
    buckets: dict[tuple[str, str], list[PodInfo]] = {}
    unattributed: list[UnattributedPod] = []
    not_owned: list[str] = []
    for pod in pods:
        if not isinstance(pod, Mapping):
            unattributed.append(UnattributedPod("", f"not a pod object: {type(pod).__name__}"))
            continue
        name = pod_name(pod)
        if check_ownership and uid is not None and not resolver.owned_by(pod, uid):
            not_owned.append(name)
            continue
        try:
            component = _claim(cd, pod_bearing, pod)
            instance = matching_instance_id(cd.component(component), pod, instance_ids[component])
            replica_src = replica_sources[component]
            replica = single_value(replica_src[1], pod) if replica_src else None
        except PodQueryError as exc:
            unattributed.append(UnattributedPod(name, str(exc)))
            continue
        info = pod_info(pod, component, instance, replica, detail=detail)
        buckets.setdefault((component, instance), []).append(info)
    result: dict[str, ComponentPods] = {}
    for comp_name in reversed(list(cd.components)):  # children before parents
        comp = cd.component(comp_name)
        if comp.has_pod_definition:
            instances = tuple(
                InstancePods(
                    iid, sc.desired, tuple(sorted(buckets.get((comp_name, iid), []), key=lambda p: p.name))
                )
                for iid, sc in per_instance_scale[comp_name].items()
            )
            desired = sum(i.desired for i in instances)
            current = sum(i.current for i in instances)
            ready_n = sum(i.ready for i in instances)
            nodes = {p.node for i in instances for p in i.pods if p.node}
        else:
            instances = ()
            desired = current = ready_n = 0
            nodes = set()
        for child in comp.children:
            cp = result[child]
            desired += cp.desired
            current += cp.current
            ready_n += cp.ready
            nodes.update(cp.nodes)
        source = replica_sources[comp_name]
        result[comp_name] = ComponentPods(
            comp_name,
            comp.has_pod_definition,
            instances,
            desired,
            current,
            ready_n,
            tuple(sorted(nodes)),
            source[0] if source is not None else None,
        )
    return PodAttribution(
        components=tuple(result[n] for n in cd.components),
        unattributed=tuple(sorted(unattributed, key=lambda u: u.name)),
        not_owned=tuple(sorted(not_owned)),
        detailed=detail,
    )


__all__ = [
    "MAX_OWNER_DEPTH",
    "ComponentPods",
    "InstancePods",
    "OwnerLookup",
    "OwnerResolver",
    "PodAttribution",
    "PodInfo",
    "UnattributedPod",
    "attribute_pods",
    "belongs_to",
    "pod_info",
    "pod_resources",
    "pod_status",
]
