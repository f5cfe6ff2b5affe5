"""Placement needs of a workload manifest, for multi-cluster schedulers (Nova-like), no pods needed.

:func:`placement_needs` returns, per component instance, the desired and minimum replicas, one
pod's requests (Kubernetes' rules: init containers, sidecars, pod-level resources, overhead;
extended resources such as ``nvidia.com/gpu``, ``amd.com/gpu``, ``nvidia.com/mig-*`` included),
the node selector, affinity and tolerations; the gangs with their minimum pod counts and minimum
resource totals; and the workload totals (desired and minimum).

* ``minimum`` replicas of an instance: ``minReplicas`` when the definition sets it, else the
  desired count (a non-elastic component needs all its pods).
* Fragmented specs only give what their fragments give: affinity from ``podAffinityPath`` /
  ``nodeAffinityPath``; no node selector or tolerations (``None``).
* Gangs follow the gang rules of :mod:`workload_map.resolve.gangs` evaluated without pods:
  ``podGroup`` gives one gang (its subgroups listed); each ``podGroups`` member gives one gang, or
  one per instance when the member is a multi-instance component (KAI sizes those per instance,
  e.g. one gang per JobSet replicated job). A gang's minimum resources follow the subtree-scale
  arithmetic: each leaf instance contributes its minimum count (``minReplicas`` if > 0, else
  ``replicas``) x one pod's request, multiplied through scaled parents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workload_map.resolve.compiled import Definition, as_compiled
from workload_map.resolve.gangs import PodResources, StructureSummary, subtree_size
from workload_map.resolve.resolver import resolve
from workload_map.resolve.resources import EMPTY_TOTALS, ResourceTotals, sum_totals
from workload_map.resolve.types import Instance, Workload


@dataclass(frozen=True)
class InstanceNeeds:
    component: str
    instance_id: str
    desired_replicas: int
    min_replicas: int
    pod_requests: ResourceTotals
    node_selector: Mapping[str, Any] | None
    affinity: Mapping[str, Any] | None
    tolerations: tuple[Any, ...] | None
    #: The pod's ``priorityClassName`` (from the pod spec, or a fragmented ``priorityClassNamePath``).
    priority_class_name: str | None = None
    #: Whether the object holds this instance's pod spec at all (an optional role the object does
    #: not declare, e.g. a PyTorchJob without ``Master``, is not declared).
    declared: bool = True

    @property
    def hard_node_affinity(self) -> Mapping[str, Any] | None:
        """``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`` (the node
        selector the scheduler must satisfy), or None."""
        node_affinity = (self.affinity or {}).get("nodeAffinity")
        if not isinstance(node_affinity, Mapping):
            return None
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        return required if isinstance(required, Mapping) else None

    @property
    def desired_total(self) -> ResourceTotals:
        return self.pod_requests.times(self.desired_replicas)

    @property
    def min_total(self) -> ResourceTotals:
        return self.pod_requests.times(self.min_replicas)

    def to_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "instanceId": self.instance_id,
            "desiredReplicas": self.desired_replicas,
            "minReplicas": self.min_replicas,
            "podRequests": self.pod_requests.to_dict(),
            "desiredTotal": self.desired_total.to_dict(),
            "minTotal": self.min_total.to_dict(),
            "nodeSelector": None if self.node_selector is None else dict(self.node_selector),
            "affinity": None if self.affinity is None else dict(self.affinity),
            "tolerations": None if self.tolerations is None else list(self.tolerations),
            "priorityClassName": self.priority_class_name,
            "declared": self.declared,
        }


@dataclass(frozen=True)
class GangNeeds:
    """A set of pods that must be placed together: at least ``min_pods`` pods needing
    ``min_resources`` in total. ``sub_groups`` lists ``(component, min pods)`` for ``podGroup``."""

    name: str
    pod_group: str
    component: str
    instance_id: str | None
    min_pods: int
    min_resources: ResourceTotals
    sub_groups: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "podGroup": self.pod_group,
            "component": self.component,
            "instanceId": self.instance_id,
            "minPods": self.min_pods,
            "minResources": self.min_resources.to_dict(),
            "subGroups": [{"component": c, "minPods": n} for c, n in self.sub_groups],
        }


@dataclass(frozen=True)
class PlacementNeeds:
    definition: str
    name: str | None
    namespace: str | None
    instances: tuple[InstanceNeeds, ...]
    gangs: tuple[GangNeeds, ...]

    @property
    def desired_pods(self) -> int:
        return sum(i.desired_replicas for i in self.instances)

    @property
    def min_pods(self) -> int:
        return sum(i.min_replicas for i in self.instances)

    @property
    def desired_total(self) -> ResourceTotals:
        return sum_totals(i.desired_total for i in self.instances)

    @property
    def min_total(self) -> ResourceTotals:
        return sum_totals(i.min_total for i in self.instances)

    def to_dict(self) -> dict[str, Any]:
        return {
            "definition": self.definition,
            "name": self.name,
            "namespace": self.namespace,
            "instances": [i.to_dict() for i in self.instances],
            "gangs": [g.to_dict() for g in self.gangs],
            "totals": {
                "desiredPods": self.desired_pods,
                "minPods": self.min_pods,
                "desired": self.desired_total.to_dict(),
                "minimum": self.min_total.to_dict(),
            },
        }


_SchedulingFields = tuple[
    Mapping[str, Any] | None, Mapping[str, Any] | None, tuple[Any, ...] | None, str | None
]


def _scheduling_fields(inst: Instance) -> _SchedulingFields:
    """(nodeSelector, affinity, tolerations, priorityClassName) of one instance's pods."""
    spec = inst.spec.effective_pod_spec
    if spec is not None:
        ns = spec.get("nodeSelector")
        aff = spec.get("affinity")
        tol = spec.get("tolerations")
        pcn = spec.get("priorityClassName")
        return (
            ns if isinstance(ns, dict) else None,
            aff if isinstance(aff, dict) else None,
            tuple(tol) if isinstance(tol, list) else None,
            pcn if isinstance(pcn, str) and pcn else None,
        )
    frag = inst.spec.fragmented
    if frag is not None:
        affinity: dict[str, Any] = {}
        if frag.node_affinity:
            affinity["nodeAffinity"] = dict(frag.node_affinity)
        if frag.pod_affinity:
            affinity["podAffinity"] = dict(frag.pod_affinity)
        return None, affinity or None, None, frag.priority_class_name or None
    return None, None, None, None


def _declared(inst: Instance) -> bool:
    spec = inst.spec
    if spec.pod_template is not None or spec.pod_spec is not None:
        return True
    return spec.fragmented is not None and bool(spec.fragmented.to_dict())


def _pod_resources(w: Workload) -> PodResources:
    def lookup(component: str, instance_id: str) -> ResourceTotals:
        inst = w.components[component].instance(instance_id)
        return inst.pod_resources if inst is not None else EMPTY_TOTALS

    return lookup


def _gangs(s: StructureSummary, w: Workload, obj: Mapping[str, Any]) -> list[GangNeeds]:
    gs = s.definition.karta.spec.optimization_instructions.gang_scheduling
    out: list[GangNeeds] = []
    if gs is None:
        return out
    res = _pod_resources(w)
    if gs.pod_group is not None:
        pg = gs.pod_group
        if pg.sub_groups:
            subs: list[tuple[str, int]] = []
            total = EMPTY_TOTALS
            for sub in pg.sub_groups:
                size = subtree_size(s, obj, sub.component_name, None, res)
                subs.append((sub.component_name, size.pods))
                total = total + size.resources
            root = s.definition.root_name
            pods = sum(n for _, n in subs)
            out.append(GangNeeds(pg.name, pg.name, root, None, pods, total, tuple(subs)))
        else:
            root = s.definition.root_name
            size = subtree_size(s, obj, root, None, res)
            out.append(GangNeeds(pg.name, pg.name, root, None, size.pods, size.resources))
        return out
    for group in gs.pod_groups or ():
        for member in group.members:
            name = member.component_name
            comp = w.components.get(name)
            if comp is None:
                continue
            per_instance = comp.definition.instance_id_path is not None and comp.has_pod_definition
            targets: list[str | None] = [i.id for i in comp.instances] if per_instance else [None]
            for iid in targets:
                label = f"{group.name}/{name}" + (f"/{iid}" if iid is not None else "")
                size = subtree_size(s, obj, name, iid, res)
                out.append(GangNeeds(label, group.name, name, iid, size.pods, size.resources))
    return out


def instance_needs(w: Workload) -> tuple[InstanceNeeds, ...]:
    """Per instance of every component with a pod definition (declaration order), what one pod
    needs and how many pods there are: the one place both ``requirements --fit`` and the Karmada
    interpreter read component requirements from."""
    instances: list[InstanceNeeds] = []
    for comp in w.components.values():
        if not comp.has_pod_definition:
            continue
        for inst in comp.instances:
            ns, aff, tol, pcn = _scheduling_fields(inst)
            desired = inst.scale.desired
            minimum = inst.scale.min_replicas if inst.scale.min_replicas is not None else desired
            instances.append(
                InstanceNeeds(
                    comp.name,
                    inst.id,
                    desired,
                    minimum,
                    inst.pod_resources,
                    ns,
                    aff,
                    tol,
                    pcn,
                    _declared(inst),
                )
            )
    return tuple(instances)


def placement_needs(definition: Definition, obj: Mapping[str, Any]) -> PlacementNeeds:
    """What the workload ``obj`` needs from a cluster, from the manifest alone (see module doc).
    Raises only :class:`~workload_map.errors.WorkloadMapError` subclasses."""
    cd = as_compiled(definition)
    w = resolve(cd, obj)
    s = StructureSummary.of(cd)
    return PlacementNeeds(
        definition=cd.name,
        name=w.name,
        namespace=w.namespace,
        instances=instance_needs(w),
        gangs=tuple(_gangs(s, w, obj)),
    )


__all__ = ["GangNeeds", "InstanceNeeds", "PlacementNeeds", "instance_needs", "placement_needs"]
