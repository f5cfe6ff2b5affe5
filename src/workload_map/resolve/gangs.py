"""Gang scheduling: the PodGroup KAI Scheduler's Karta fallback creates for a pod.

:func:`group_pod` reproduces KAI's ``KartaGrouper`` (consumers.md 1.4) for both gang formats:

* ``podGroup`` (current; wins when both are set): name ``pg-<topOwnerUID>-<podGroup.name>``,
  topology copied; one subgroup per ``subGroups[]`` entry named after its component, with
  ``minMember`` = :func:`subtree_scale` of that component (0 is an error: ``component X must
  expose a replica scale definition``); the pod is a member of a subgroup when it matches the
  component or any descendant by component type selector. With subgroups ``minSubGroup`` = their
  count and ``minAvailable`` = 0 (the PodGroup gets no ``minMember``); without, ``minAvailable``
  = subtree scale of the root.
* ``podGroups`` (alpha): infer the pod's component, pick the effective member, read the group
  keys, name ``pg-<topOwnerUID>[-<key>...]``, ``minAvailable`` = subtree scale of the effective
  component (for the pod's instance when that component is the pod's own). Note KAI's caveat:
  pods of different members of one group can compute different sizes for the same name.
* no gang instructions: the default grouper, ``pg-<topOwnerName>-<topOwnerUID>`` and 1.
* ``expressions`` (workload-map extension, wins over both formats): what KAI's native groupers
  do, the default grouper's PodGroup with the fields the expressions yield replaced
  (:mod:`workload_map.resolve.gang_expressions`); format ``expressions``. The formats stay in
  the definition for KAI's Karta plugin, which does not read the extension.

Except with ``expressions`` (which decide topology themselves), a plan without a definition
topology takes the top owner's ``kai.scheduler/topology*`` annotations, as KAI's default grouper.

Names are not lowercased or truncated (KAI does neither); a name that is not a DNS-1123
subdomain is an error. Only :class:`~workload_map.errors.WorkloadMapError` subclasses escape
(:class:`GangError` for gang rules, :class:`~workload_map.errors.ResolveError` from the core).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Literal

from workload_map.errors import ExpressionError, ResolveError
from workload_map.kube.objects import annotations_of
from workload_map.model.definition import PodGroupMember, Topology
from workload_map.resolve._podquery import (
    PodQueryError,
    group_keys_of,
    matches_component_type,
    matching_instance_id,
    passes_filters,
    pod_name,
)
from workload_map.resolve._support import compile_jq
from workload_map.resolve.compiled import (
    CompiledDefinition,
    CompiledExpression,
    CompiledGangExpressions,
    CompiledGangMember,
    Definition,
    as_compiled,
)
from workload_map.resolve.extract import instance_ids, scales_by_id
from workload_map.resolve.gang_expressions import evaluate_gang_expressions
from workload_map.resolve.resources import EMPTY_TOTALS, ResourceTotals, sum_totals

POD_GROUP_ANNOTATION = "pod-group-name"
SUBGROUP_LABEL = "kai.scheduler/subgroup-name"

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*$")


class GangError(ResolveError):
    """The gang rules cannot be applied to this pod / workload."""


# --- structure summary -------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A pod-group membership a component can take: the group, the member entry and its
    compiled pod-side paths."""

    pod_group: str
    member: PodGroupMember
    compiled: CompiledGangMember


@dataclass(frozen=True)
class StructureSummary:
    """Upstream's ``StructureSummary``: the tree, the leaves (components with a pod definition,
    root first then declaration order), whether any component has a scale definition, and per
    component its candidate memberships (own component first, then each ancestor; YAML order
    within a level)."""

    definition: CompiledDefinition
    parents: Mapping[str, str | None]
    children: Mapping[str, tuple[str, ...]]
    leaves: tuple[str, ...]
    has_scale: bool
    candidates: Mapping[str, tuple[Candidate, ...]]

    @classmethod
    def of(cls, definition: Definition) -> StructureSummary:
        cd = as_compiled(definition)
        parents = {name: c.parent for name, c in cd.components.items()}
        children = {name: c.children for name, c in cd.components.items()}
        leaves = tuple(name for name, c in cd.components.items() if c.has_pod_definition)
        has_scale = any(c.definition.scale_definition is not None for c in cd.components.values())
        gs = cd.karta.spec.optimization_instructions.gang_scheduling
        groups = (gs.pod_groups or ()) if gs is not None else ()
        # cd.pod_groups holds the same groups and members, in the same order, compiled.
        compiled_members = [
            tuple(zip(g.members, cg.members, strict=True))
            for g, cg in zip(groups, cd.pod_groups, strict=True)
        ]
        candidates: dict[str, tuple[Candidate, ...]] = {}
        for name in cd.components:
            found: list[Candidate] = []
            level: str | None = name
            while level is not None:
                for group, members in zip(groups, compiled_members, strict=True):
                    for member, compiled in members:
                        if member.component_name == level:
                            found.append(Candidate(group.name, member, compiled))
                level = parents[level]
            candidates[name] = tuple(found)
        return cls(
            definition=cd,
            parents=MappingProxyType(parents),
            children=MappingProxyType(children),
            leaves=leaves,
            has_scale=has_scale,
            candidates=MappingProxyType(candidates),
        )

    def descendants(self, name: str) -> tuple[str, ...]:
        out: list[str] = []
        for child in self.children.get(name, ()):
            out.append(child)
            out.extend(self.descendants(child))
        return tuple(out)


def _summary(definition: Definition | StructureSummary) -> StructureSummary:
    return definition if isinstance(definition, StructureSummary) else StructureSummary.of(definition)


# --- the steps ------------------------------------------------------------------------------------


def infer_pod_component(pod: Mapping[str, Any], definition: Definition | StructureSummary) -> str:
    """The pod's leaf component: the only leaf, else the first leaf whose type selector matches."""
    s = _summary(definition)
    if len(s.leaves) == 1:
        return s.leaves[0]
    for leaf in s.leaves:
        if _matches(s, leaf, pod):
            return leaf
    raise GangError(f"no component found for pod {pod_name(pod)}")


def _matches(s: StructureSummary, component: str, pod: Mapping[str, Any]) -> bool:
    try:
        return matches_component_type(s.definition.component(component), pod)
    except PodQueryError as exc:
        raise GangError(f"pod {pod_name(pod)}: component {component!r} type selector: {exc}") from exc


@dataclass(frozen=True)
class EffectiveMember:
    """The member a pod is grouped by: its component, the pod group, the member entry and its
    compiled pod-side paths."""

    component: str
    pod_group: str
    member: PodGroupMember
    compiled: CompiledGangMember


def effective_member(
    pod: Mapping[str, Any], component: str, definition: Definition | StructureSummary
) -> EffectiveMember:
    """The first candidate without filters or whose filters all pass on the pod."""
    s = _summary(definition)
    for cand in s.candidates.get(component, ()):
        filters = cand.compiled.filters or ()
        try:
            ok = not filters or passes_filters(filters, pod)
        except PodQueryError as exc:
            raise GangError(
                f"pod {pod_name(pod)}: filters of member {cand.member.component_name!r}: {exc}"
            ) from exc
        if ok:
            return EffectiveMember(cand.member.component_name, cand.pod_group, cand.member, cand.compiled)
    raise GangError(f"no pod group member matches pod {pod_name(pod)} (component {component!r})")


def infer_pod_instance(
    pod: Mapping[str, Any], component: str, obj: Mapping[str, Any], definition: Definition | StructureSummary
) -> str:
    """The pod's instance id of ``component`` (``""`` for a single-instance component)."""
    s = _summary(definition)
    ids = instance_ids(s.definition.component(component), s.definition.name, obj)
    try:
        return matching_instance_id(s.definition.component(component), pod, ids)
    except PodQueryError as exc:
        raise GangError(f"pod {pod_name(pod)}: component {component!r}: {exc}") from exc


def group_keys(pod: Mapping[str, Any], paths: Sequence[str | CompiledExpression] | None) -> tuple[str, ...]:
    """One non-empty value per ``groupByKeyPaths`` entry, Go-formatted. Paths are compiled
    expressions (a compiled definition's gang members) or jq source text."""
    try:
        compiled = tuple(p if isinstance(p, CompiledExpression) else _compiled_key(p) for p in paths or ())
        return group_keys_of(compiled, pod)
    except PodQueryError as exc:
        raise GangError(f"pod {pod_name(pod)}: group key: {exc}") from exc


def _compiled_key(source: str) -> CompiledExpression:
    try:
        expr = compile_jq(source)
    except ExpressionError as exc:
        raise GangError(f"group key path {source!r}: {exc.message}") from exc
    return CompiledExpression("groupByKeyPaths", source, expr, "groupByKeyPaths")


def _unit(replicas: int | None, min_replicas: int | None) -> int:
    if min_replicas is not None and min_replicas > 0:
        return min_replicas
    if replicas is not None and replicas > 0:
        return replicas
    return 0


PodResources = Callable[[str, str], ResourceTotals]
"""``(component, instance id) -> one pod's requests``, for :func:`subtree_size`."""


@dataclass(frozen=True)
class SubtreeSize:
    """The minimum pods of a subtree and (when :func:`subtree_size` is given pod requests) the
    resources they request, both by :func:`subtree_scale`'s arithmetic."""

    pods: int
    resources: ResourceTotals = EMPTY_TOTALS


def subtree_scale(
    definition: Definition | StructureSummary,
    obj: Mapping[str, Any],
    component: str,
    instance_id: str | None = None,
) -> int:
    """Upstream's ``CalculateSubtreeScale`` (spec 3.6).

    If any component has a scale definition: per instance ``minReplicas`` if > 0, else
    ``replicas`` if > 0, else 0, summed over the instances (only ``instance_id`` when given, at the
    top level); children's subtree scales summed; the result is own x children when both are
    non-zero, else whichever is non-zero. Exception (KAI's newer library): a component with a
    ``podSelector.replicaSelector`` forms one gang per replica, so when both are non-zero its scale
    is children / own (the per-replica size; children as is when own does not divide them).
    Otherwise the leaves of the subtree are counted (a leaf
    with ``instanceIdPath`` counts its instances, or 1 for a given instance).
    """
    return subtree_size(definition, obj, component, instance_id).pods


def subtree_size(
    definition: Definition | StructureSummary,
    obj: Mapping[str, Any],
    component: str,
    instance_id: str | None = None,
    pod_resources: PodResources | None = None,
) -> SubtreeSize:
    """:func:`subtree_scale` with, when ``pod_resources`` is given, the resources of those pods:
    each pod-bearing instance contributes its counted pods x one pod's requests, multiplied
    through scaled parents (divided, rounding up, for a per-replica component)."""
    s = _summary(definition)
    s.definition.component(component)  # unknown names raise DefinitionError
    return _size(s, obj, component, instance_id, pod_resources)


def _size(
    s: StructureSummary,
    obj: Mapping[str, Any],
    component: str,
    instance_id: str | None,
    pod_resources: PodResources | None,
) -> SubtreeSize:
    comp = s.definition.component(component)
    res = pod_resources if comp.has_pod_definition else None
    if not s.has_scale:
        # Count the leaves: a leaf counts its instances (only ``instance_id`` when given).
        own: tuple[str, ...] = ()
        if comp.has_pod_definition:
            own = (instance_id,) if instance_id is not None else instance_ids(comp, s.definition.name, obj)
        total = SubtreeSize(len(own), sum_totals(res(component, iid) for iid in own) if res else EMPTY_TOTALS)
        for child in comp.children:
            kid = _size(s, obj, child, None, pod_resources)
            total = SubtreeSize(total.pods + kid.pods, total.resources + kid.resources)
        return total
    units = [
        (iid, _unit(sc.replicas, sc.min_replicas))
        for iid, sc in scales_by_id(comp, s.definition.name, obj).items()
        if instance_id is None or iid == instance_id
    ]
    own_pods = sum(n for _, n in units)
    own_res = sum_totals(res(component, iid).times(n) for iid, n in units) if res else EMPTY_TOTALS
    kids = [_size(s, obj, child, None, pod_resources) for child in comp.children]
    kid_pods = sum(k.pods for k in kids)
    kid_res = sum_totals(k.resources for k in kids)
    if own_pods and kid_pods and _per_replica(s, component):
        # KAI's newer library: a replica-selected component (LWS ``group``) is one gang per
        # replica; its children count pods workload-wide, so one replica is children / own.
        if kid_pods % own_pods == 0:
            return SubtreeSize(kid_pods // own_pods, divided(kid_res, own_pods))
        return SubtreeSize(kid_pods, kid_res)
    if own_pods and kid_pods:
        return SubtreeSize(own_pods * kid_pods, kid_res.times(own_pods))
    if own_pods:
        return SubtreeSize(own_pods, own_res)
    return SubtreeSize(kid_pods, kid_res)


def _per_replica(s: StructureSummary, component: str) -> bool:
    selector = s.definition.component(component).definition.pod_selector
    return selector is not None and selector.replica_selector is not None


def divided(res: ResourceTotals, n: int) -> ResourceTotals:
    """``res`` split into ``n`` equal replicas (each amount rounded up)."""

    if res is EMPTY_TOTALS:
        return res

    def part(v: int) -> int:
        return -(-v // n)

    return ResourceTotals(
        cpu_millis=part(res.cpu_millis),
        memory_bytes=part(res.memory_bytes),
        gpus=part(res.gpus),
        extended={k: part(v) for k, v in res.extended.items()},
        claims={k: part(v) for k, v in res.claims.items()},
    )


# --- the plan -------------------------------------------------------------------------------------


def _topology_dict(t: Topology | None) -> dict[str, str] | None:
    if t is None:
        return None
    return {
        "topology": t.topology_name,
        "requiredTopologyLevel": t.required_topology_level,
        "preferredTopologyLevel": t.preferred_topology_level,
    }


@dataclass(frozen=True)
class SubGroupPlan:
    """One PodGroup subgroup: ``name`` is the component name (or what ``gangScheduling.
    expressions.subGroups`` gave); ``parent`` is ``None`` for KAI's flat Karta subgroups;
    ``min_sub_group`` replaces ``min_member`` when set (they are exclusive, as in the CRD);
    ``pod_is_member`` says whether the grouped pod belongs."""

    name: str
    min_member: int
    topology: Topology | None = None
    parent: str | None = None
    pod_is_member: bool = False
    min_sub_group: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "minMember": None if self.min_sub_group is not None else self.min_member,
            "minSubGroup": self.min_sub_group,
            "parent": self.parent,
            "topologyConstraint": _topology_dict(self.topology),
            "podIsMember": self.pod_is_member,
        }


GangFormat = Literal["podGroup", "podGroups", "default", "expressions"]


@dataclass(frozen=True)
class PodGroupPlan:
    """The PodGroup KAI's Karta fallback would create or update for one pod.

    ``min_available`` is KAI's ``Metadata.MinAvailable``; the PodGroup's ``spec.minMember`` is
    that value unless ``min_sub_group`` is set (they are mutually exclusive), see
    :attr:`min_member`. ``component``/``instance_id`` describe the effective component for the
    ``podGroups`` format (``None`` otherwise); ``keys`` are the group keys used in the name.
    """

    name: str
    format: GangFormat
    min_available: int
    min_sub_group: int | None = None
    sub_groups: tuple[SubGroupPlan, ...] = ()
    topology: Topology | None = None
    pod_group: str | None = None
    component: str | None = None
    instance_id: str | None = None
    keys: tuple[str, ...] = ()

    @property
    def min_member(self) -> int | None:
        return None if self.min_sub_group is not None else self.min_available

    @property
    def pod_sub_group(self) -> str | None:
        """The subgroup label value for the pod: the first subgroup it is a member of."""
        for sg in self.sub_groups:
            if sg.pod_is_member:
                return sg.name
        return None

    def pod_annotations(self) -> dict[str, str]:
        return {POD_GROUP_ANNOTATION: self.name}

    def pod_labels(self) -> dict[str, str]:
        sub = self.pod_sub_group
        return {SUBGROUP_LABEL: sub} if sub is not None else {}

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "format": self.format,
            "minAvailable": self.min_available,
            "minMember": self.min_member,
            "minSubGroup": self.min_sub_group,
            "topologyConstraint": _topology_dict(self.topology),
            "subGroups": [sg.to_dict() for sg in self.sub_groups],
            "podGroup": self.pod_group,
            "component": self.component,
            "instanceId": self.instance_id,
            "keys": list(self.keys),
            "podAnnotations": self.pod_annotations(),
            "podLabels": self.pod_labels(),
        }


def _meta(obj: Mapping[str, Any], key: str) -> str:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    value = meta.get(key) if isinstance(meta, Mapping) else None
    if not isinstance(value, str) or not value:
        raise GangError(f"top owner has no metadata.{key}")
    return value


def _checked_name(name: str) -> str:
    if len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name):
        raise GangError(f'pod group name "{name}" is not a valid DNS-1123 subdomain')
    return name


def has_gang_instructions(definition: Definition) -> bool:
    """Whether the definition uses a Karta gang format (what KAI's Karta plugin reads; the
    ``expressions`` extension alone does not count)."""
    gs = as_compiled(definition).karta.spec.optimization_instructions.gang_scheduling
    return gs is not None and (gs.pod_group is not None or bool(gs.pod_groups))


def group_pod(
    definition: Definition | StructureSummary, top_owner: Mapping[str, Any], pod: Mapping[str, Any]
) -> PodGroupPlan:
    """The PodGroup KAI would create for ``pod`` whose top owner (the workload object) is
    ``top_owner``. See the module docstring for the rules."""
    if not isinstance(top_owner, Mapping) or not isinstance(pod, Mapping):
        raise GangError("top owner and pod must be JSON objects")
    s = _summary(definition)
    gs = s.definition.karta.spec.optimization_instructions.gang_scheduling
    compiled = s.definition.gang_expressions
    if compiled is not None:
        # Like KAI's native groupers: the default grouper's PodGroup, fields replaced.
        return _overridden(replace(default_plan(top_owner), format="expressions"), top_owner, pod, compiled)
    if gs is not None and gs.pod_group is not None:
        plan = _v2(s, top_owner, pod)
    elif gs is not None and gs.pod_groups:
        plan = _alpha(s, top_owner, pod)
    else:
        plan = default_plan(top_owner)
    if plan.topology is None:
        # KAI's default grouper, under every Karta format: the top owner's topology annotations.
        plan = replace(plan, topology=owner_topology(top_owner))
    return plan


def default_plan(top_owner: Mapping[str, Any]) -> PodGroupPlan:
    """KAI's default grouper: ``pg-<name>-<uid>`` of the top owner, minMember 1, the top owner's
    topology annotations. What KAI does for a type no Karta definition covers exactly."""
    return PodGroupPlan(
        name=f"pg-{_meta(top_owner, 'name')}-{_meta(top_owner, 'uid')}",
        format="default",
        min_available=1,
        topology=owner_topology(top_owner),
    )


TOPOLOGY_ANNOTATION = "kai.scheduler/topology"
TOPOLOGY_REQUIRED_ANNOTATION = "kai.scheduler/topology-required-placement"
TOPOLOGY_PREFERRED_ANNOTATION = "kai.scheduler/topology-preferred-placement"


def owner_topology(top_owner: Mapping[str, Any]) -> Topology | None:
    """The topology constraint KAI's default grouper reads from the top owner's annotations
    (``None`` when none of the three is set)."""
    ann = annotations_of(top_owner)
    name = ann.get(TOPOLOGY_ANNOTATION, "")
    required = ann.get(TOPOLOGY_REQUIRED_ANNOTATION, "")
    preferred = ann.get(TOPOLOGY_PREFERRED_ANNOTATION, "")
    if not (name or required or preferred):
        return None
    return Topology(topology_name=name, required_topology_level=required, preferred_topology_level=preferred)


def _overridden(
    plan: PodGroupPlan,
    top_owner: Mapping[str, Any],
    pod: Mapping[str, Any],
    compiled: CompiledGangExpressions,
) -> PodGroupPlan:
    """``plan`` with what the gang expressions set."""
    o = evaluate_gang_expressions(compiled, top_owner, pod)
    if o.name is not None:
        plan = replace(plan, name=_checked_name(o.name))
    if o.min_member is not None:
        plan = replace(plan, min_available=o.min_member)
    if o.min_sub_group is not None:
        plan = replace(plan, min_sub_group=o.min_sub_group)
    subs = plan.sub_groups
    if o.sub_groups is not None:
        subs = tuple(
            SubGroupPlan(
                name=sg.name,
                min_member=sg.min_member or 0,
                topology=_topology_of(sg.topology),
                parent=sg.parent,
                min_sub_group=sg.min_sub_group,
            )
            for sg in o.sub_groups
        )
    if o.pod_sub_group is not None:
        if o.pod_sub_group not in {sg.name for sg in subs}:
            raise GangError(
                f"podSubGroup: the pod's subgroup {o.pod_sub_group!r} is not one of the subgroups"
            )
        subs = tuple(replace(sg, pod_is_member=sg.name == o.pod_sub_group) for sg in subs)
    return replace(plan, sub_groups=subs)


def _topology_of(t: Mapping[str, str] | None) -> Topology | None:
    if not t:
        return None
    return Topology(
        topology_name=t.get("topology", ""),
        required_topology_level=t.get("requiredTopologyLevel", ""),
        preferred_topology_level=t.get("preferredTopologyLevel", ""),
    )


def _v2(s: StructureSummary, top_owner: Mapping[str, Any], pod: Mapping[str, Any]) -> PodGroupPlan:
    gs = s.definition.karta.spec.optimization_instructions.gang_scheduling
    assert gs is not None and gs.pod_group is not None
    pg = gs.pod_group
    name = _checked_name(f"pg-{_meta(top_owner, 'uid')}-{pg.name}")
    subs: list[SubGroupPlan] = []
    for sub in pg.sub_groups or ():
        if sub.component_name not in s.definition.components:
            raise GangError(f"component {sub.component_name} not found")
        size = subtree_scale(s, top_owner, sub.component_name)
        if size == 0:
            raise GangError(f"component {sub.component_name} must expose a replica scale definition")
        member = any(_matches(s, c, pod) for c in (sub.component_name, *s.descendants(sub.component_name)))
        subs.append(SubGroupPlan(sub.component_name, size, sub.topology, None, member))
    if subs:
        return PodGroupPlan(
            name=name,
            format="podGroup",
            min_available=0,
            min_sub_group=len(subs),
            sub_groups=tuple(subs),
            topology=pg.topology,
            pod_group=pg.name,
        )
    return PodGroupPlan(
        name=name,
        format="podGroup",
        min_available=subtree_scale(s, top_owner, s.definition.root_name),
        topology=pg.topology,
        pod_group=pg.name,
    )


def _alpha(s: StructureSummary, top_owner: Mapping[str, Any], pod: Mapping[str, Any]) -> PodGroupPlan:
    component = infer_pod_component(pod, s)
    eff = effective_member(pod, component, s)
    instance: str | None = None
    if eff.component == component:
        instance = infer_pod_instance(pod, component, top_owner, s)
    keys = group_keys(pod, eff.compiled.group_by)
    name = _checked_name("-".join(("pg", _meta(top_owner, "uid"), *keys)))
    return PodGroupPlan(
        name=name,
        format="podGroups",
        min_available=subtree_scale(s, top_owner, eff.component, instance),
        pod_group=eff.pod_group,
        component=eff.component,
        instance_id=instance,
        keys=keys,
    )


__all__ = [
    "POD_GROUP_ANNOTATION",
    "SUBGROUP_LABEL",
    "TOPOLOGY_ANNOTATION",
    "TOPOLOGY_PREFERRED_ANNOTATION",
    "TOPOLOGY_REQUIRED_ANNOTATION",
    "Candidate",
    "EffectiveMember",
    "GangError",
    "PodGroupPlan",
    "PodResources",
    "StructureSummary",
    "SubGroupPlan",
    "SubtreeSize",
    "default_plan",
    "divided",
    "effective_member",
    "group_keys",
    "group_pod",
    "has_gang_instructions",
    "infer_pod_component",
    "infer_pod_instance",
    "owner_topology",
    "subtree_scale",
    "subtree_size",
]
