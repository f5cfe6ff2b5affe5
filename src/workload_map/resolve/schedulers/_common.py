"""What every scheduler renderer shares: its output (:class:`Rendered`), the pod-template and
workload changes that link pods to the objects (data, applied later through the write-back),
owner references, quantities and the check for objects another owner already holds."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from workload_map.kube.objects import controller_ref, name_of, namespace_of
from workload_map.resolve.gang_plan import Gang, GangMember, GangPlan
from workload_map.resolve.quantity import cpu_text, memory_text
from workload_map.resolve.resources import ResourceTotals

_EMPTY: Mapping[str, str] = MappingProxyType({})

#: ``value(priority class name) -> int | None`` (``None``: unknown).
PriorityValue = Callable[[str], "int | None"]
DisruptionMode = Literal["single", "all"]


@dataclass(frozen=True)
class RenderOptions:
    """Choices the plan leaves to the caller: the scheduler name pods get (``None``: the
    scheduler's usual one), how to learn a PriorityClass's value (Kueue needs it beside the
    name), and the Workload API's disruption mode (``None``: the API's default)."""

    scheduler_name: str | None = None
    priority_value: PriorityValue | None = None
    disruption_mode: DisruptionMode | None = None


@dataclass(frozen=True)
class TemplateChange:
    """What to set on one pod template (component instance) so its pods join their objects."""

    component: str
    instance_id: str
    labels: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    annotations: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    scheduler_name: str | None = None
    #: ``spec.schedulingGroup.podGroupName`` (the Workload API).
    pod_group_name: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"component": self.component, "instanceId": self.instance_id}
        if self.labels:
            out["labels"] = dict(self.labels)
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        if self.scheduler_name is not None:
            out["schedulerName"] = self.scheduler_name
        if self.pod_group_name is not None:
            out["schedulingGroup"] = {"podGroupName": self.pod_group_name}
        return out


@dataclass(frozen=True)
class WorkloadChange:
    """What to set on the workload object itself: labels, annotations, and whether to run the
    definition's suspend actions (``suspendActions``: path and JSON value)."""

    labels: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    annotations: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    suspend_actions: tuple[tuple[str, str], ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.labels or self.annotations or self.suspend_actions)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.labels:
            out["labels"] = dict(self.labels)
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        if self.suspend_actions:
            out["suspend"] = [{"path": p, "value": v} for p, v in self.suspend_actions]
        return out


#: ``(component, instance id) -> (apiVersion, kind, name)`` of the object its pods join.
Links = Mapping[tuple[str, str], tuple[str, str, str]]


@dataclass(frozen=True)
class Rendered:
    """One scheduler's objects for one workload, the changes that link the pods, and notes
    (what the scheduler cannot express, what was left out and why)."""

    scheduler: str
    objects: tuple[dict[str, Any], ...] = ()
    template_changes: tuple[TemplateChange, ...] = ()
    workload_change: WorkloadChange = field(default_factory=WorkloadChange)
    notes: tuple[str, ...] = ()
    links: Links = field(default_factory=lambda: MappingProxyType({}))

    def object_for(self, component: str, instance_id: str) -> dict[str, Any] | None:
        """The object the pods of ``component``/``instance_id`` join (``None``: none)."""
        target = self.links.get((component, instance_id))
        if target is None:
            return None
        for obj in self.objects:
            if (obj.get("apiVersion"), obj.get("kind"), name_of(obj)) == target:
                return obj
        return None

    def to_dict(self, plan: GangPlan) -> dict[str, Any]:
        return {
            "scheduler": self.scheduler,
            "workload": {
                "apiVersion": plan.api_version,
                "kind": plan.kind,
                "namespace": plan.namespace,
                "name": plan.name,
                "uid": plan.uid,
            },
            "definition": plan.definition,
            "objects": copy.deepcopy(list(self.objects)),
            "podTemplateChanges": [c.to_dict() for c in self.template_changes],
            "workloadChanges": self.workload_change.to_dict(),
            "notes": list(plan.notes) + list(self.notes),
        }


# --- helpers shared by renderers ----------------------------------------------------------------------


def owner_references(plan: GangPlan) -> list[dict[str, Any]]:
    """The workload as controller owner (garbage collection follows it); empty without a uid."""
    if not plan.uid:
        return []
    return [
        {
            "apiVersion": plan.api_version,
            "kind": plan.kind,
            "name": plan.name,
            "uid": plan.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def no_uid_note(plan: GangPlan) -> tuple[str, ...]:
    if plan.uid:
        return ()
    return (
        f"{plan.kind}/{plan.name} has no metadata.uid (a manifest not created yet): the objects carry "
        "no owner reference; they get one when rendered from the live object",
    )


def metadata(plan: GangPlan, name: str, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if plan.namespace:
        meta["namespace"] = plan.namespace
    if labels:
        meta["labels"] = dict(labels)
    refs = owner_references(plan)
    if refs:
        meta["ownerReferences"] = refs
    return meta


def quantities(res: ResourceTotals) -> dict[str, str]:
    """A ResourceList: cpu, memory and every named extended resource with a positive amount.
    ``gpus`` (a sum of names already listed) and DRA claims (not node resources) are left out."""
    out: dict[str, str] = {}
    if res.cpu_millis > 0:
        out["cpu"] = cpu_text(res.cpu_millis)
    if res.memory_bytes > 0:
        out["memory"] = memory_text(res.memory_bytes)
    for name in sorted(res.extended):
        if res.extended[name] > 0:
            out[name] = str(res.extended[name])
    return out


def min_resources(plan: GangPlan, gang: Gang) -> dict[str, str] | None:
    """The gang's minimum resources: the definition's ``minResources`` expression, else the
    requests of its required pods; none for a gang of 0 pods."""
    if plan.policy.min_resources is not None:
        return dict(plan.policy.min_resources)
    if gang.min_member == 0:
        return None
    return quantities(gang.min_resources)


def task_names_unique(gang: Gang) -> str | None:
    """A note when two members or nodes of ``gang`` share a name (objects need unique names)."""
    seen: set[str] = set()
    for name in [n.name for n in gang.nodes] + [m.task for m in gang.members]:
        if name in seen:
            return f"gang {gang.name}: two subgroups are named {name!r}"
        seen.add(name)
    return None


def link_all(
    members: Sequence[GangMember], api_version: str, kind: str, name: str
) -> dict[tuple[str, str], tuple[str, str, str]]:
    return {(m.component, m.instance_id): (api_version, kind, name) for m in members}


def conflicts(plan: GangPlan, rendered: Rendered, existing: Sequence[Mapping[str, Any]]) -> list[str]:
    """Objects ``rendered`` would create that already exist under another controller (same
    apiVersion, kind, namespace and name, a controller reference to another uid): one message
    each, naming both owners. ``existing`` is what the cluster (or a file) holds."""
    index: dict[tuple[str, str, str, str], Mapping[str, Any]] = {}
    for obj in existing:
        key = (str(obj.get("apiVersion")), str(obj.get("kind")), namespace_of(obj), name_of(obj))
        index[key] = obj
    out: list[str] = []
    for obj in rendered.objects:
        key = (str(obj.get("apiVersion")), str(obj.get("kind")), namespace_of(obj), name_of(obj))
        found = index.get(key)
        if found is None:
            continue
        ref = controller_ref(found)
        if ref is None or ref.get("uid") == plan.uid:
            continue
        out.append(
            f"{obj.get('kind')} {key[2]}/{key[3]} ({obj.get('apiVersion')}) is already controlled by "
            f"{ref.get('kind')}/{ref.get('name')} (uid {ref.get('uid')}), not by "
            f"{plan.kind}/{plan.name}: rename one of the workloads"
        )
    return out
