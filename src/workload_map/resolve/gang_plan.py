"""The gang plan of a whole workload: one plan, rendered per scheduler (:mod:`.schedulers`).

:mod:`.gangs` answers KAI's per-pod question (the PodGroup KAI's pod-grouper creates for one
pod). A scheduler that takes its gang objects from the workload's controller (Volcano,
scheduler-plugins coscheduling, the Workload API, Kueue, or KAI's external PodGroups) needs the
same rules read once for the whole workload, without pods. :func:`plan_gangs` does that:

* **Scope.** No gang format in the definition (``podGroup`` / ``podGroups``): no gang. The
  ``podGroup`` format, or sizing ``expressions`` (KAI's native groupers: one PodGroup per top
  owner): one gang over every pod of the workload. The ``podGroups`` format alone: one gang per
  member, per instance when the member is a multi-instance pod component (as placement counts).
* **Members.** One per pod template in scope (component instance), in definition order: the
  minimum pods (``minReplicas`` if > 0, else ``replicas``, times the scales of the pod-less
  components above it), the desired pods, one pod's requests (the resolver's: init containers,
  sidecars, pod-level resources, overhead, DRA claims), its PriorityClass and claims shared by
  name. A component with a ``podSelector.replicaSelector`` (LWS ``group``) makes the gang repeat
  per replica (:class:`ReplicaSplit`).
* **Subgroups.** A ``podGroup`` subgroup whose component holds several pod templates is a
  :class:`GangNode` over them (a nested gang: the Workload API's CompositePodGroups); a
  subgroup with one pod template is that member. Otherwise members sit straight under the gang.
* **Sizes.** ``minMember``: the ``expressions.minMember`` (evaluated on the workload, ``$pod``
  empty), else the format's subtree arithmetic (:func:`.gangs.subtree_scale`); with a
  ``minSubGroup`` (expression, or the ``podGroup`` format's subgroup count) the sum of the
  smallest subgroups it requires. Members are then trimmed in order to fit ``minMember``
  (:attr:`Gang.required`): the pods a scheduler must place first, whose requests are the gang's
  minimum resources (``expressions.minResources`` replaces them).
* **Policy.** queue, PriorityClass and schedule timeout: the caller's options, else the
  ``expressions`` (``queue``, ``priorityClassName``, ``scheduleTimeoutSeconds``), else (the
  PriorityClass) the first member's pod template. Topology: the ``podGroup`` format's, else the
  workload's ``kai.scheduler/topology*`` annotations.

Every count is bounded before it is used (:data:`MAX_GANG_MEMBERS` members and subgroups per
workload, int32 sizes); only :class:`~workload_map.errors.WorkloadMapError` subclasses escape.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

from workload_map.kube.objects import annotations_of, labels_of, name_of, namespace_of, uid_of
from workload_map.model.definition import Topology
from workload_map.resolve.compiled import CompiledDefinition, Definition, as_compiled
from workload_map.resolve.gang_expressions import GangPolicy, evaluate_gang_policy, evaluate_gang_sizes
from workload_map.resolve.gangs import GangError, StructureSummary, divided, owner_topology, subtree_scale
from workload_map.resolve.resolver import resolve
from workload_map.resolve.resources import EMPTY_TOTALS, ResourceTotals, sum_totals
from workload_map.resolve.types import Instance, Workload

#: Members plus subgroups one workload's plan may hold (KAI's own subgroup ceiling).
MAX_GANG_MEMBERS = 10_000
_INT32_MAX = 2**31 - 1
#: Object names double as label values (coscheduling's pod label), so they stay DNS-1123 labels.
MAX_NAME_LENGTH = 63
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_NOT_DNS = re.compile(r"[^a-z0-9-]+")
_LABEL_PATH = re.compile(r"""^\.metadata\.labels\[\s*"([^"\\]+)"\s*\]$""")

SpecKind = Literal["podTemplate", "podSpec", "fragmented"]


@dataclass(frozen=True)
class GangMember:
    """One pod template of the gang (a component instance).

    ``task`` is its name in scheduler objects (the instance id, else the component name, as a
    DNS-1123 label); ``min_pods``/``desired_pods`` count the pods of the whole workload (all
    replicas of a :class:`ReplicaSplit`); ``parent`` is the :class:`GangNode` it hangs under.
    """

    component: str
    instance_id: str
    task: str
    min_pods: int
    desired_pods: int
    pod_requests: ResourceTotals
    spec_kind: SpecKind
    pod_template: Mapping[str, Any] | None = None
    priority_class_name: str | None = None
    shared_claims: tuple[tuple[str, str], ...] = ()
    parent: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "instanceId": self.instance_id,
            "task": self.task,
            "minPods": self.min_pods,
            "desiredPods": self.desired_pods,
            "podRequests": self.pod_requests.to_dict(),
            "specKind": self.spec_kind,
            "priorityClassName": self.priority_class_name,
            "sharedClaims": [{"name": n, "resourceClaimName": c} for n, c in self.shared_claims],
            "parent": self.parent,
        }


@dataclass(frozen=True)
class GangNode:
    """A subgroup above members (a ``podGroup`` subgroup over several pod templates). ``min_sub_group``
    is how many of its children must be placed (``None``: all)."""

    name: str
    component: str
    parent: str | None = None
    min_sub_group: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "component": self.component,
            "parent": self.parent,
            "minSubGroup": self.min_sub_group,
        }


@dataclass(frozen=True)
class ReplicaSplit:
    """The gang is ``replicas`` gangs of ``size`` pods, one per replica of ``component`` (a
    ``replicaSelector`` component); the controller tells their pods apart by ``label_key``
    (``None`` when the selector is not a plain label)."""

    component: str
    label_key: str | None
    replicas: int
    size: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "labelKey": self.label_key,
            "replicas": self.replicas,
            "size": self.size,
        }


@dataclass(frozen=True)
class Gang:
    """One gang of the workload. ``min_member`` counts pods (per replica with a
    :attr:`replica_split`); ``min_sub_group`` counts the top-level subgroups that must be placed
    (``None``: all). ``required`` is each member's share of ``min_member`` (members in order,
    trimmed to fit); ``min_resources`` what those pods request."""

    key: str
    pod_group: str
    name: str
    min_member: int
    members: tuple[GangMember, ...]
    required: tuple[int, ...]
    min_resources: ResourceTotals
    min_sub_group: int | None = None
    nodes: tuple[GangNode, ...] = ()
    topology: Topology | None = None
    replica_split: ReplicaSplit | None = None
    declared_sub_groups: bool = False

    @property
    def depth(self) -> int:
        """Levels of groups: 1 for members straight under the gang, +1 per node level."""
        parents = {n.name: n.parent for n in self.nodes}
        deepest = 0
        for node in self.nodes:
            d, cur = 1, node.parent
            while cur is not None and d <= len(self.nodes):
                d, cur = d + 1, parents.get(cur)
            deepest = max(deepest, d)
        return deepest + 1

    def children(self, parent: str | None) -> tuple[GangNode | GangMember, ...]:
        """Nodes then members directly under ``parent`` (``None``: the gang itself)."""
        return tuple(n for n in self.nodes if n.parent == parent) + tuple(
            m for m in self.members if m.parent == parent
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "podGroup": self.pod_group,
            "name": self.name,
            "minMember": self.min_member,
            "minSubGroup": self.min_sub_group,
            "minResources": self.min_resources.to_dict(),
            "members": [
                {**m.to_dict(), "requiredPods": r} for m, r in zip(self.members, self.required, strict=True)
            ],
            "nodes": [n.to_dict() for n in self.nodes],
            "topology": None
            if self.topology is None
            else {
                "topology": self.topology.topology_name,
                "requiredTopologyLevel": self.topology.required_topology_level,
                "preferredTopologyLevel": self.topology.preferred_topology_level,
            },
            "replicaSplit": None if self.replica_split is None else self.replica_split.to_dict(),
            "depth": self.depth,
        }


@dataclass(frozen=True)
class PlanOptions:
    """What the caller decides over the definition (``None``: the definition or the scheduler's
    own convention decides)."""

    queue: str | None = None
    priority_class_name: str | None = None
    schedule_timeout_seconds: int | None = None


@dataclass(frozen=True)
class GangPlan:
    """The gangs of one workload and everything a renderer reads besides them: the workload's
    identity and metadata, every pod template (``pod_sets``, for Kueue), the policy, whether the
    definition can suspend the workload (and how), and notes for the reader."""

    definition: str
    api_version: str
    kind: str
    name: str
    namespace: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    gangs: tuple[Gang, ...]
    pod_sets: tuple[GangMember, ...]
    policy: GangPolicy
    suspend_actions: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0] if "/" in self.api_version else ""

    def gang_of(self, component: str, instance_id: str) -> Gang | None:
        """The gang holding the pods of ``component``/``instance_id`` (``None``: none does)."""
        for gang in self.gangs:
            for m in gang.members:
                if m.component == component and m.instance_id == instance_id:
                    return gang
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "definition": self.definition,
            "workload": {
                "apiVersion": self.api_version,
                "kind": self.kind,
                "namespace": self.namespace,
                "name": self.name,
                "uid": self.uid,
            },
            "gangs": [g.to_dict() for g in self.gangs],
            "policy": self.policy.to_dict(),
            "canSuspend": bool(self.suspend_actions),
            "notes": list(self.notes),
        }


# --- names ------------------------------------------------------------------------------------------


def object_name(*parts: str) -> str:
    """``parts`` joined by ``-`` as a DNS-1123 label: lowercased, other characters replaced by
    ``-``; longer than :data:`MAX_NAME_LENGTH` it is cut and suffixed with a hash of the whole, so
    distinct inputs stay distinct."""
    raw = "-".join(p for p in parts if p)
    text = _NOT_DNS.sub("-", raw.lower()).strip("-") or "gang"
    if len(text) <= MAX_NAME_LENGTH and text == raw:
        return text
    digest = hashlib.sha256(raw.encode()).hexdigest()[:8]
    if len(text) <= MAX_NAME_LENGTH - 9:
        return f"{text}-{digest}"
    return f"{text[: MAX_NAME_LENGTH - 9].rstrip('-')}-{digest}"


def _task(component: str, instance_id: str) -> str:
    base = instance_id or component
    return base if _DNS1123_LABEL.match(base) and len(base) <= MAX_NAME_LENGTH else object_name(base)


# --- members ----------------------------------------------------------------------------------------


def _unit(inst: Instance) -> int:
    sc = inst.scale
    if sc.min_replicas is not None and sc.min_replicas > 0:
        return sc.min_replicas
    if sc.replicas is not None and sc.replicas > 0:
        return sc.replicas
    return 0


def _spec_kind(inst: Instance) -> SpecKind:
    if inst.spec.pod_template is not None:
        return "podTemplate"
    if inst.spec.fragmented is not None:
        return "fragmented"
    return "podSpec"


def _priority_class(inst: Instance) -> str | None:
    spec = inst.spec.effective_pod_spec
    value = spec.get("priorityClassName") if spec is not None else None
    if value is None and inst.spec.fragmented is not None:
        value = inst.spec.fragmented.priority_class_name
    return value if isinstance(value, str) and value else None


def _shared_claims(inst: Instance) -> tuple[tuple[str, str], ...]:
    """Pod-level claims naming an existing ResourceClaim (already shared by every pod naming it)."""
    spec = inst.spec.effective_pod_spec
    claims = spec.get("resourceClaims") if spec is not None else None
    out: list[tuple[str, str]] = []
    for c in claims if isinstance(claims, list) else ():
        if (
            isinstance(c, Mapping)
            and isinstance(c.get("name"), str)
            and isinstance(c.get("resourceClaimName"), str)
        ):
            out.append((c["name"], c["resourceClaimName"]))
    return tuple(out)


def _template(inst: Instance) -> Mapping[str, Any] | None:
    if inst.spec.pod_template is not None:
        return inst.spec.pod_template
    if inst.spec.pod_spec is not None:
        tpl: dict[str, Any] = {"spec": inst.spec.pod_spec}
        if inst.spec.metadata is not None:
            tpl["metadata"] = inst.spec.metadata
        return tpl
    return None


def _member(inst: Instance, count: int, desired: int, parent: str | None) -> GangMember:
    return GangMember(
        component=inst.component,
        instance_id=inst.id,
        task=_task(inst.component, inst.id),
        min_pods=count,
        desired_pods=desired,
        pod_requests=inst.pod_resources,
        spec_kind=_spec_kind(inst),
        pod_template=_template(inst),
        priority_class_name=_priority_class(inst),
        shared_claims=_shared_claims(inst),
        parent=parent,
    )


def _label_key(cd: CompiledDefinition, component: str) -> str | None:
    selector = cd.component(component).definition.pod_selector
    rs = selector.replica_selector if selector is not None else None
    m = _LABEL_PATH.match(rs.key_path.strip()) if rs is not None else None
    return m.group(1) if m else None


@dataclass
class _Scope:
    """Walks the component tree under a gang's root: members in definition order, the scales of
    pod-less components multiplied into the members below them, and the replica split."""

    cd: CompiledDefinition
    w: Workload
    members: list[GangMember] = field(default_factory=list)
    split: ReplicaSplit | None = None

    def walk(self, component: str, instance_id: str | None, factor: int, dfactor: int) -> None:
        comp = self.w.components[component]
        instances = [i for i in comp.instances if instance_id is None or i.id == instance_id]
        if comp.has_pod_definition:
            if len(self.members) + len(instances) > MAX_GANG_MEMBERS:
                raise GangError(f'karta "{self.cd.name}": more than {MAX_GANG_MEMBERS} gang members')
            for inst in instances:
                count = _capped(_unit(inst) * factor)
                desired = _capped(inst.scale.desired * dfactor)
                self.members.append(_member(inst, count, desired, None))
        if not comp.children:
            return
        down, ddown = factor, dfactor
        if not comp.has_pod_definition and comp.definition.scale_definition is not None:
            selector = comp.definition.pod_selector
            own = sum(_unit(i) for i in instances)
            if selector is not None and selector.replica_selector is not None:
                # One gang per replica; the children already count the pods of every replica.
                if self.split is None:
                    self.split = ReplicaSplit(component, _label_key(self.cd, component), own, 0)
            elif own > 0:
                down = _capped(factor * own)
                ddown = _capped(dfactor * sum(i.scale.desired for i in instances))
        for child in comp.children:
            self.walk(child, None, down, ddown)


def _capped(n: int) -> int:
    return n if n <= _INT32_MAX else _INT32_MAX


def _collect(
    cd: CompiledDefinition, w: Workload, root: str, instance_id: str | None
) -> tuple[list[GangMember], list[GangNode], ReplicaSplit | None]:
    scope = _Scope(cd, w)
    scope.walk(root, instance_id, 1, 1)
    return scope.members, [], scope.split


# --- sizes ------------------------------------------------------------------------------------------


def _trim(members: Sequence[GangMember], min_member: int, per_replica: int) -> tuple[int, ...]:
    """Each member's share of ``min_member`` pods (per replica: ``per_replica`` replicas' worth),
    members in order."""
    left = min_member * per_replica
    out: list[int] = []
    for m in members:
        take = min(m.min_pods, max(left, 0))
        out.append(take)
        left -= take
    return tuple(out)


def _resources(members: Sequence[GangMember], required: Sequence[int], per_replica: int) -> ResourceTotals:
    total = sum_totals(m.pod_requests.times(n) for m, n in zip(members, required, strict=True) if n)
    if per_replica > 1 and total is not EMPTY_TOTALS:
        return divided(total, per_replica)
    return total


def _smallest(sizes: Sequence[int], k: int) -> int:
    return sum(sorted(sizes)[:k])


def _top_sizes(gang_members: Sequence[GangMember], nodes: Sequence[GangNode]) -> list[int]:
    """Pods of each top-level subgroup (a node's members summed)."""
    by_name = {n.name: n for n in nodes}

    def top(parent: str | None) -> str | None:
        cur = parent
        while cur is not None and by_name[cur].parent is not None:
            cur = by_name[cur].parent
        return cur

    sizes: dict[str, int] = {}
    for i, m in enumerate(gang_members):
        key = top(m.parent) or f"\0member{i}"
        sizes[key] = sizes.get(key, 0) + m.min_pods
    return list(sizes.values())


# --- the plan ---------------------------------------------------------------------------------------


def _sizing_expressions(cd: CompiledDefinition) -> bool:
    ge = cd.gang_expressions
    return ge is not None and any(
        e is not None for e in (ge.name, ge.min_member, ge.min_sub_group, ge.sub_groups, ge.pod_sub_group)
    )


def plan_gangs(
    definition: Definition, obj: Mapping[str, Any], options: PlanOptions | None = None
) -> GangPlan:
    """The gang plan of the workload ``obj`` (see the module docstring)."""
    if not isinstance(obj, Mapping):
        raise GangError("the workload must be a JSON object")
    cd = as_compiled(definition)
    options = options or PlanOptions()
    w = resolve(cd, obj)
    s = StructureSummary.of(cd)
    gs = cd.karta.spec.optimization_instructions.gang_scheduling
    notes: list[str] = []
    workload_name = name_of(obj)
    sizes = evaluate_gang_sizes(cd.gang_expressions, obj) if cd.gang_expressions is not None else None
    gangs: list[Gang] = []
    owner_topo = owner_topology(obj)
    if gs is None or (gs.pod_group is None and not gs.pod_groups):
        notes.append(f'definition "{cd.name}" declares no gang (gangScheduling.podGroup or podGroups)')
    elif gs.pod_group is not None or _sizing_expressions(cd):
        pg = gs.pod_group
        members, nodes, split = _collect(cd, w, cd.root_name, None)
        declared = False
        min_sub_group: int | None = None
        if pg is not None and pg.sub_groups:
            members, nodes = _v2_tree(cd, w, members, [sg.component_name for sg in pg.sub_groups])
            declared = True
            base_min = sum(subtree_scale(s, obj, sg.component_name) for sg in pg.sub_groups)
            min_sub_group = len(pg.sub_groups)
        else:
            base_min = subtree_scale(s, obj, cd.root_name) if pg is not None else _format_min(s, obj, cd)
        pod_group = pg.name if pg is not None else _first_group(cd)
        topology = pg.topology if pg is not None and pg.topology is not None else owner_topo
        gangs.append(
            _gang(
                key="",
                pod_group=pod_group,
                name=object_name(workload_name),
                base_min=base_min,
                min_sub_group=min_sub_group,
                sizes=sizes,
                members=members,
                nodes=nodes,
                split=split,
                topology=topology,
                declared=declared
                or (cd.gang_expressions is not None and cd.gang_expressions.sub_groups is not None),
            )
        )
    else:
        entries: list[tuple[str, str, str | None]] = []
        for group in gs.pod_groups or ():
            for member in group.members:
                comp = w.components.get(member.component_name)
                if comp is None:
                    raise GangError(
                        f'karta "{cd.name}": pod group {group.name!r} names no component '
                        f"{member.component_name!r}"
                    )
                per_instance = comp.definition.instance_id_path is not None and comp.has_pod_definition
                for iid in [i.id for i in comp.instances] if per_instance else [None]:
                    entries.append((group.name, member.component_name, iid))
                    if len(entries) > MAX_GANG_MEMBERS:
                        raise GangError(f'karta "{cd.name}": more than {MAX_GANG_MEMBERS} gangs')
        several = len(entries) > 1
        for group_name, component, iid in entries:
            members, nodes, split = _collect(cd, w, component, iid)
            key = "-".join(p for p in (group_name, component, iid) if p) if several else ""
            gangs.append(
                _gang(
                    key=key,
                    pod_group=group_name,
                    name=object_name(workload_name, key) if several else object_name(workload_name),
                    base_min=subtree_scale(s, obj, component, iid),
                    min_sub_group=None,
                    sizes=None,
                    members=members,
                    nodes=nodes,
                    split=split,
                    topology=owner_topo,
                    declared=False,
                )
            )
    names = [g.name for g in gangs]
    if len(set(names)) != len(names):
        raise GangError(f'karta "{cd.name}": two gangs of {workload_name} get the same object name')
    pod_sets = tuple(_all_members(cd, w))
    policy = (
        evaluate_gang_policy(cd.gang_expressions, obj) if cd.gang_expressions is not None else GangPolicy()
    )
    policy = policy.overridden(
        queue=options.queue,
        priority_class_name=options.priority_class_name,
        schedule_timeout_seconds=options.schedule_timeout_seconds,
    )
    if policy.priority_class_name is None:
        first = next((m.priority_class_name for m in pod_sets if m.priority_class_name), None)
        policy = policy.overridden(priority_class_name=first)
    root_def = cd.root.definition.suspend_definition
    actions = tuple((a.path, a.value) for a in root_def.suspend_actions) if root_def is not None else ()
    return GangPlan(
        definition=cd.name,
        api_version=str(obj.get("apiVersion") or ""),
        kind=str(obj.get("kind") or ""),
        name=workload_name,
        namespace=namespace_of(obj),
        uid=uid_of(obj),
        labels=MappingProxyType(labels_of(obj)),
        annotations=MappingProxyType(annotations_of(obj)),
        gangs=tuple(gangs),
        pod_sets=pod_sets,
        policy=policy,
        suspend_actions=actions,
        notes=tuple(notes),
    )


def _first_group(cd: CompiledDefinition) -> str:
    return cd.pod_groups[0].name if cd.pod_groups else "gang"


def _format_min(s: StructureSummary, obj: Mapping[str, Any], cd: CompiledDefinition) -> int:
    """What the definition's Karta format alone sizes the whole workload as: its root subtree."""
    return subtree_scale(s, obj, cd.root_name)


def _v2_tree(
    cd: CompiledDefinition, w: Workload, members: list[GangMember], subs: Sequence[str]
) -> tuple[list[GangMember], list[GangNode]]:
    """Members regrouped under the ``podGroup`` format's subgroups: a subgroup whose component
    holds one pod template is that member; one holding several becomes a node over them.
    Members under no subgroup are left out (the format gangs only the subgroups)."""
    out_members: list[GangMember] = []
    nodes: list[GangNode] = []
    for sub in subs:
        if sub not in cd.components:
            raise GangError(f"component {sub} not found")
        inside = {sub, *_descendants(cd, sub)}
        mine = [m for m in members if m.component in inside]
        if len(mine) == 1:
            out_members.append(_with_parent(mine[0], None, task=_task(sub, "")))
        elif mine:
            node = GangNode(name=_task(sub, ""), component=sub)
            nodes.append(node)
            out_members.extend(_with_parent(m, node.name) for m in mine)
    return out_members, nodes


def _with_parent(m: GangMember, parent: str | None, task: str | None = None) -> GangMember:
    return replace(m, parent=parent, task=task or m.task)


def _descendants(cd: CompiledDefinition, name: str) -> list[str]:
    out: list[str] = []
    for child in cd.component(name).children:
        out.append(child)
        out.extend(_descendants(cd, child))
    return out


def _gang(
    *,
    key: str,
    pod_group: str,
    name: str,
    base_min: int,
    min_sub_group: int | None,
    sizes: Any,
    members: list[GangMember],
    nodes: list[GangNode],
    split: ReplicaSplit | None,
    topology: Topology | None,
    declared: bool,
) -> Gang:
    replicas = split.replicas if split is not None and split.replicas > 0 else 1
    if sizes is not None and sizes.min_sub_group is not None:
        min_sub_group = sizes.min_sub_group
    tops = _top_sizes(members, nodes)
    if sizes is not None and sizes.min_member is not None:
        min_member = sizes.min_member
    elif min_sub_group is not None and min_sub_group < len(tops):
        min_member = _smallest(tops, min_sub_group) // replicas
    else:
        min_member = base_min
    min_member = _capped(max(min_member, 0))
    required = _trim(members, min_member, replicas)
    if split is not None:
        split = ReplicaSplit(split.component, split.label_key, split.replicas, min_member)
    return Gang(
        key=key,
        pod_group=pod_group,
        name=name,
        min_member=min_member,
        members=tuple(members),
        required=required,
        min_resources=_resources(members, required, replicas),
        min_sub_group=min_sub_group,
        nodes=tuple(nodes),
        topology=topology,
        replica_split=split,
        declared_sub_groups=declared,
    )


def _all_members(cd: CompiledDefinition, w: Workload) -> list[GangMember]:
    members, _, _ = _collect(cd, w, cd.root_name, None)
    return [_with_parent(m, None) for m in members]


__all__ = [
    "MAX_GANG_MEMBERS",
    "MAX_NAME_LENGTH",
    "Gang",
    "GangMember",
    "GangNode",
    "GangPlan",
    "PlanOptions",
    "ReplicaSplit",
    "SpecKind",
    "object_name",
    "plan_gangs",
]
