"""The resolved view of one workload object: small, frozen, JSON-ready data classes.

Nothing here evaluates anything; :func:`workload_map.resolve.resolve` builds these. Values taken
from the workload object (pod templates, specs, fragments) are the object's own JSON data, shared
and not copied: treat them as read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from workload_map.model.definition import (
    STATUS_SEVERITY_ORDER,
    ComponentDefinition,
    GroupVersionKind,
    ResourceStatus,
)
from workload_map.resolve.resources import EMPTY_TOTALS, ResourceTotals


@dataclass(frozen=True)
class Scale:
    """Replica counts of one instance; ``None`` means the definition does not set it (or the
    path yielded ``null``)."""

    replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None

    @property
    def desired(self) -> int:
        """Desired pods of the instance: ``replicas``, else ``minReplicas``, else 1 (upstream rule)."""
        if self.replicas is not None:
            return self.replicas
        if self.min_replicas is not None:
            return self.min_replicas
        return 1

    @property
    def is_empty(self) -> bool:
        return self.replicas is None and self.min_replicas is None and self.max_replicas is None

    def to_dict(self) -> dict[str, Any]:
        return {"replicas": self.replicas, "minReplicas": self.min_replicas, "maxReplicas": self.max_replicas}


@dataclass(frozen=True)
class FragmentedPodSpec:
    """The pod fields of a fragmented spec for one instance (raw JSON values, ``None`` = unset)."""

    scheduler_name: str | None = None
    labels: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
    resources: Mapping[str, Any] | None = None
    resource_claims: list[Any] | None = None
    pod_affinity: Mapping[str, Any] | None = None
    node_affinity: Mapping[str, Any] | None = None
    containers: list[Any] | None = None
    container: Mapping[str, Any] | None = None
    priority_class_name: str | None = None
    image: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, wire in _FRAGMENT_WIRE_NAMES:
            value = getattr(self, key)
            if value is not None:
                out[wire] = value
        return out


_FRAGMENT_WIRE_NAMES: tuple[tuple[str, str], ...] = (
    ("scheduler_name", "schedulerName"),
    ("labels", "labels"),
    ("annotations", "annotations"),
    ("resources", "resources"),
    ("resource_claims", "resourceClaims"),
    ("pod_affinity", "podAffinity"),
    ("node_affinity", "nodeAffinity"),
    ("containers", "containers"),
    ("container", "container"),
    ("priority_class_name", "priorityClassName"),
    ("image", "image"),
)


@dataclass(frozen=True)
class ExtractedSpec:
    """What the spec definition found for one instance. At most one of ``pod_template``,
    ``pod_spec`` and ``fragmented`` is set (``metadata`` goes with ``pod_spec``)."""

    pod_template: Mapping[str, Any] | None = None
    pod_spec: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None
    fragmented: FragmentedPodSpec | None = None

    @property
    def effective_pod_spec(self) -> Mapping[str, Any] | None:
        """The PodSpec: the template's ``spec``, or the bare pod spec (``None`` for fragments)."""
        if self.pod_template is not None:
            spec = self.pod_template.get("spec")
            return spec if isinstance(spec, dict) else None
        return self.pod_spec

    @property
    def is_empty(self) -> bool:
        return (
            self.pod_template is None
            and self.pod_spec is None
            and self.metadata is None
            and (self.fragmented is None)
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.pod_template is not None:
            out["podTemplateSpec"] = self.pod_template
        if self.pod_spec is not None:
            out["podSpec"] = self.pod_spec
        if self.metadata is not None:
            out["metadata"] = self.metadata
        if self.fragmented is not None:
            out["fragmentedPodSpec"] = self.fragmented.to_dict()
        return out


@dataclass(frozen=True)
class Instance:
    """One instance of a component: id (``""`` for the single unnamed instance), its scale, its
    extracted spec, and the resources it requests.

    ``pod_resources`` is one pod's request; ``resources`` is ``pod_resources x desired_replicas``
    (for components with a pod definition; empty otherwise).
    """

    component: str
    id: str
    index: int
    scale: Scale
    spec: ExtractedSpec
    pod_resources: ResourceTotals = EMPTY_TOTALS
    resources: ResourceTotals = EMPTY_TOTALS

    @property
    def desired_replicas(self) -> int:
        return self.scale.desired

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scale": self.scale.to_dict(),
            "desiredReplicas": self.desired_replicas,
            "spec": self.spec.to_dict(),
            "podResources": self.pod_resources.to_dict(),
            "resources": self.resources.to_dict(),
        }


@dataclass(frozen=True)
class Condition:
    """One condition read with the definition's field names. ``reason``/``message`` are ``None``
    when the definition does not name their fields (or the value is not a string)."""

    type: str
    status: str
    reason: str | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "status": self.status, "reason": self.reason, "message": self.message}


@dataclass(frozen=True)
class WorkloadStatus:
    """Status of a component (the workload's status is its root component's).

    ``phases`` lists every matched status in upstream's match order
    (:data:`~workload_map.model.definition.STATUS_MATCH_ORDER`), or ``(Undefined,)``.
    ``primary_phase`` is the most severe of them
    (:data:`~workload_map.model.definition.STATUS_SEVERITY_ORDER`). ``conditions`` keeps every
    condition in object order; :meth:`condition` gives the last one of a type (upstream's index).
    """

    phases: tuple[ResourceStatus, ...] = (ResourceStatus.UNDEFINED,)
    phase: str | None = None
    conditions: tuple[Condition, ...] = ()
    #: For each of ``phases``, the index of the matcher that fired in the definition's list for
    #: that status (``statusMappings.<status>[i]``); empty when nothing matched. Not in to_dict:
    #: the resolver's output stays upstream's; describe puts it in words.
    matched_by: tuple[int, ...] = ()

    @property
    def primary_phase(self) -> ResourceStatus:
        for status in STATUS_SEVERITY_ORDER:
            if status in self.phases:
                return status
        return ResourceStatus.UNDEFINED

    def condition(self, type_: str) -> Condition | None:
        """The last condition of this type (upstream's "last duplicate wins")."""
        for cond in reversed(self.conditions):
            if cond.type == type_:
                return cond
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "phases": [p.value for p in self.phases],
            "primaryPhase": self.primary_phase.value,
            "phase": self.phase,
            "conditions": [c.to_dict() for c in self.conditions],
        }


UNDEFINED_STATUS = WorkloadStatus()


@dataclass(frozen=True)
class Component:
    """A component of the resolved workload (flat view).

    ``instances`` are in declaration order (the order the instance id path yields them).
    ``desired_pods`` is the sum of the instances' desired replicas for a component with a pod
    definition, ``None`` for grouping components. ``status`` is set when the component has a
    ``statusDefinition``.
    """

    name: str
    definition: ComponentDefinition
    parent: str | None
    children: tuple[str, ...]
    instances: tuple[Instance, ...]
    status: WorkloadStatus | None
    resources: ResourceTotals

    @property
    def kind(self) -> GroupVersionKind | None:
        return self.definition.kind

    @property
    def has_pod_definition(self) -> bool:
        return self.definition.has_pod_definition

    @property
    def instance_ids(self) -> tuple[str, ...]:
        return tuple(i.id for i in self.instances)

    @property
    def desired_pods(self) -> int | None:
        if not self.has_pod_definition:
            return None
        return sum(i.desired_replicas for i in self.instances)

    def instance(self, instance_id: str) -> Instance | None:
        for inst in self.instances:
            if inst.id == instance_id:
                return inst
        return None

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind
        return {
            "name": self.name,
            "kind": None
            if kind is None
            else {"group": kind.group, "version": kind.version, "kind": kind.kind},
            "parent": self.parent,
            "children": list(self.children),
            "hasPodDefinition": self.has_pod_definition,
            "desiredPods": self.desired_pods,
            "instances": [i.to_dict() for i in self.instances],
            "status": None if self.status is None else self.status.to_dict(),
            "resources": self.resources.to_dict(),
        }


@dataclass(frozen=True)
class InstanceNode:
    """An instance in the tree, with the child components scoped to it.

    ``shared`` is true when this instance is a single child instance attached under every
    instance of a multi-instance parent (see docs/library.md, "Tree scoping").
    """

    instance: Instance
    children: tuple[ComponentNode, ...] = ()
    shared: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.instance.id,
            "shared": self.shared,
            "children": [c.to_dict() for c in self.children],
        }


@dataclass(frozen=True)
class ComponentNode:
    """A component in the tree: its instances (those scoped to the parent instance)."""

    name: str
    instances: tuple[InstanceNode, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "instances": [i.to_dict() for i in self.instances]}


@dataclass(frozen=True)
class Workload:
    """A workload object resolved through its definition.

    ``components`` indexes every component by name, root first then children in declaration
    order. ``tree`` (built on first access) is the root node; each instance node holds the
    child components scoped to it. ``resources`` sums the components that have a pod definition.
    """

    definition_name: str
    api_version: str | None
    kind: str | None
    name: str | None
    namespace: str | None
    uid: str | None
    components: Mapping[str, Component]
    root_name: str
    status: WorkloadStatus
    resources: ResourceTotals

    @cached_property
    def tree(self) -> ComponentNode:
        """The root node; built on first use (scoping was already checked by ``resolve``)."""
        from workload_map.resolve.tree import build_tree

        return build_tree(self.definition_name, self.components, self.root_name)

    @property
    def root(self) -> Component:
        return self.components[self.root_name]

    @property
    def phases(self) -> tuple[ResourceStatus, ...]:
        return self.status.phases

    @property
    def primary_phase(self) -> ResourceStatus:
        return self.status.primary_phase

    @property
    def desired_pods(self) -> int:
        """Pods the workload asks for: sum of ``desired_pods`` over components with pods."""
        return sum(c.desired_pods or 0 for c in self.components.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, camelCase."""
        return {
            "definition": self.definition_name,
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "namespace": self.namespace,
            "uid": self.uid,
            "status": self.status.to_dict(),
            "desiredPods": self.desired_pods,
            "resources": self.resources.to_dict(),
            "components": [c.to_dict() for c in self.components.values()],
            "tree": self.tree.to_dict(),
        }
