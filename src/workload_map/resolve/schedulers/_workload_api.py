"""The Kubernetes Workload API: a ``scheduling.k8s.io/v1beta1`` Workload for the workload
(``controllerRef``), its PodGroups, and ``v1alpha3`` CompositePodGroups for nested gangs.

* A gang whose members sit straight under it (depth 1) is one PodGroupTemplate and one PodGroup:
  ``gang.minCount`` = the gang's ``minMember`` (``basic`` for 0), as KubeRay's and JobSet's
  Workload API integrations do (one group for the cluster / JobSet's top-level mode). When only
  one of its several members must be placed at a time (``minSubGroup`` 1: JobSet's InOrder
  start-up), each member is a PodGroup of its own with ``minCount`` = its pods, as JobSet's
  integration falls back to for sequenced start-up (KEP-969 "Sequenced Startup").
* A gang with subgroups (depth > 1: pod-less components between it and its pod templates, or the
  ``podGroup`` format's subgroups over several templates) is a CompositePodGroupTemplate tree: a
  composite per gang and per subgroup (``gang.minGroupCount`` = the subgroups that must be
  placed), a PodGroupTemplate per pod template (``minCount`` = its required pods). Exactly one of
  ``podGroupTemplates`` and ``compositePodGroupTemplates`` may be set, so a Workload with one
  nested gang writes every gang as a composite.
* PriorityClass, the gang's required topology level as ``schedulingConstraints.topology[].key``
  (the API has no preferred level: noted), pod-level claims that name a ResourceClaim (already
  shared by every pod naming it) as ``resourceClaims``, and the caller's ``disruptionMode``.
* Limits, checked before anything is built: at most 8 templates per list, a tree at most 4 levels
  deep (the API's ``WorkloadMaxPodGroupTemplates`` and ``WorkloadMaxTreeDepth``), at most 4
  claims per template; beyond them :class:`WorkloadApiLimitError` names the limit.

Pods join through ``spec.schedulingGroup.podGroupName`` (a field of the pod template; fragmented
specs cannot carry it: noted) and the ``default-scheduler`` name (kube-scheduler is the one that
reads the Workload API; a template left with another scheduler's name would bypass it).
"""

from __future__ import annotations

import copy
from typing import Any

from workload_map.kube.schedulers import (
    WORKLOAD_API_COMPOSITE_VERSION,
    WORKLOAD_API_MAX_CLAIMS,
    WORKLOAD_API_MAX_DEPTH,
    WORKLOAD_API_MAX_TEMPLATES,
    WORKLOAD_API_VERSION,
)
from workload_map.resolve.gang_plan import Gang, GangMember, GangNode, GangPlan, object_name
from workload_map.resolve.gangs import GangError
from workload_map.resolve.schedulers._common import (
    Rendered,
    RenderOptions,
    TemplateChange,
    metadata,
    no_uid_note,
    task_names_unique,
)

API_VERSION = WORKLOAD_API_VERSION
COMPOSITE_API_VERSION = WORKLOAD_API_COMPOSITE_VERSION
WORKLOAD_KIND = "Workload"
POD_GROUP_KIND = "PodGroup"
COMPOSITE_KIND = "CompositePodGroup"
MAX_TEMPLATES = WORKLOAD_API_MAX_TEMPLATES
MAX_DEPTH = WORKLOAD_API_MAX_DEPTH
MAX_CLAIMS = WORKLOAD_API_MAX_CLAIMS
DEFAULT_SCHEDULER_NAME = "default-scheduler"


class WorkloadApiLimitError(GangError):
    """The gang does not fit the Workload API's limits."""


class _Builder:
    def __init__(self, plan: GangPlan, options: RenderOptions) -> None:
        self.plan = plan
        self.options = options
        self.workload = object_name(plan.name)
        self.objects: list[dict[str, Any]] = []
        self.changes: list[TemplateChange] = []
        self.links: dict[tuple[str, str], tuple[str, str, str]] = {}
        self.notes: list[str] = list(no_uid_note(plan))
        self.template_names: set[str] = set()

    # -- shared fields

    def _name(self, template: str) -> str:
        if template in self.template_names:
            raise WorkloadApiLimitError(
                f"{self.plan.kind}/{self.plan.name}: two Workload API templates are named {template!r}"
            )
        self.template_names.add(template)
        return template

    def _common(self, gang: Gang, claims: list[tuple[str, str]], with_topology: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.plan.policy.priority_class_name:
            out["priorityClassName"] = self.plan.policy.priority_class_name
        if self.options.disruption_mode is not None:
            out["disruptionMode"] = {self.options.disruption_mode: {}}
        if with_topology and gang.topology is not None:
            level = gang.topology.required_topology_level
            if level:
                out["schedulingConstraints"] = {"topology": [{"key": level}]}
            elif gang.topology.preferred_topology_level:
                self.notes.append(
                    f"gang {gang.name}: the Workload API has no preferred topology level "
                    f"({gang.topology.preferred_topology_level} left out)"
                )
        if claims:
            unique = list(dict.fromkeys(claims))
            if len(unique) > MAX_CLAIMS:
                raise WorkloadApiLimitError(
                    f"gang {gang.name}: {len(unique)} shared resource claims, the Workload API allows "
                    f"at most {MAX_CLAIMS} per pod group"
                )
            out["resourceClaims"] = [{"name": n, "resourceClaimName": c} for n, c in unique]
        return out

    @staticmethod
    def _policy(min_count: int) -> dict[str, Any]:
        return {"gang": {"minCount": min_count}} if min_count > 0 else {"basic": {}}

    def _pod_group(
        self, template: str, policy: dict[str, Any], common: dict[str, Any], parent: str | None
    ) -> str:
        name = object_name(self.workload, template)
        spec: dict[str, Any] = {
            "workloadRef": {"workloadName": self.workload, "templateName": template},
            "schedulingPolicy": policy,
            **common,
        }
        if parent is not None:
            spec["parentCompositePodGroupName"] = parent
        self.objects.append(
            {
                "apiVersion": API_VERSION,
                "kind": POD_GROUP_KIND,
                "metadata": metadata(self.plan, name),
                "spec": spec,
            }
        )
        return name

    def _link(self, members: list[GangMember] | tuple[GangMember, ...], pod_group: str) -> None:
        for m in members:
            self.links[(m.component, m.instance_id)] = (API_VERSION, POD_GROUP_KIND, pod_group)
            if m.spec_kind == "fragmented":
                self.notes.append(
                    f"{m.component}: a fragmented pod spec has no schedulingGroup field; its pods "
                    f"cannot be linked to PodGroup {pod_group}"
                )
                continue
            self.changes.append(
                TemplateChange(
                    m.component,
                    m.instance_id,
                    scheduler_name=self.options.scheduler_name or DEFAULT_SCHEDULER_NAME,
                    pod_group_name=pod_group,
                )
            )

    # -- flat gangs

    def flat(self, gang: Gang) -> list[dict[str, Any]]:
        if _one_subgroup_at_a_time(gang):
            return self.independent(gang)
        return [self._flat_one(gang)]

    def independent(self, gang: Gang) -> list[dict[str, Any]]:
        """One PodGroup per member (each gang-scheduled whole, ``minCount`` = its pods): a gang of
        which one subgroup at a time must be placed (the definition's ``minSubGroup`` 1, e.g.
        JobSet's InOrder start-up) never reaches a count summed over subgroups it starts one by
        one, and the flat API cannot ask for "one of these groups"."""
        self.notes.append(
            f"gang {gang.name}: one of its {len(gang.members)} subgroups must be placed at a time "
            f"(minSubGroup 1): each is a PodGroup of its own, gang-scheduled whole"
        )
        templates: list[dict[str, Any]] = []
        for m in gang.members:
            template = self._name(object_name(m.task))
            common = self._common(gang, list(m.shared_claims), with_topology=True)
            pg = self._pod_group(template, self._policy(m.min_pods), common, None)
            self._link([m], pg)
            templates.append({"name": template, "schedulingPolicy": self._policy(m.min_pods), **common})
        return templates

    def _flat_one(self, gang: Gang) -> dict[str, Any]:
        template = self._name(object_name(gang.key or gang.pod_group))
        claims = [c for m in gang.members for c in m.shared_claims]
        common = self._common(gang, claims, with_topology=True)
        policy = self._policy(gang.min_member)
        pg = self._pod_group(template, policy, common, None)
        self._link(gang.members, pg)
        if gang.replica_split is not None:
            self.notes.append(
                f"gang {gang.name}: one PodGroup holds every replica of {gang.replica_split.component} "
                f"(minCount {gang.min_member}, one replica's pods): a pod template cannot point each "
                "replica's pods at a PodGroup of their own"
            )
        return {"name": template, "schedulingPolicy": self._policy(gang.min_member), **common}

    # -- nested gangs

    def composite(self, gang: Gang) -> dict[str, Any]:
        if gang.depth + 1 > MAX_DEPTH:
            raise WorkloadApiLimitError(
                f"gang {gang.name}: its groups nest {gang.depth + 1} levels deep, the Workload API "
                f"allows at most {MAX_DEPTH}"
            )
        root = self._name(object_name(gang.key or gang.pod_group))
        required = dict(zip(((m.component, m.instance_id) for m in gang.members), gang.required, strict=True))
        return self._composite_template(gang, root, None, gang.min_sub_group, required, parent_object=None)

    def _composite_template(
        self,
        gang: Gang,
        template: str,
        node: str | None,
        min_sub_group: int | None,
        required: dict[tuple[str, str], int],
        parent_object: str | None,
    ) -> dict[str, Any]:
        children = gang.children(node)
        nodes = [c for c in children if isinstance(c, GangNode)]
        members = [c for c in children if isinstance(c, GangMember)]
        for kind, items in (("composite pod group", nodes), ("pod group", members)):
            if len(items) > MAX_TEMPLATES:
                raise WorkloadApiLimitError(
                    f"gang {gang.name}: {len(items)} {kind} templates under {template}, the Workload API "
                    f"allows at most {MAX_TEMPLATES}"
                )
        needed = [c for c in nodes if self._node_required(gang, c.name, required)] + [
            m for m in members if required[(m.component, m.instance_id)] > 0
        ]
        count = min_sub_group if min_sub_group is not None else len(needed)
        policy: dict[str, Any] = {"gang": {"minGroupCount": count}} if count > 0 else {"basic": {}}
        common = self._common(gang, [], with_topology=node is None)
        cpg = object_name(self.workload, template)
        spec: dict[str, Any] = {
            "workloadRef": {"workloadName": self.workload, "templateName": template},
            "schedulingPolicy": policy,
            **{k: v for k, v in common.items() if k != "resourceClaims"},
        }
        if parent_object is not None:
            spec["parentCompositePodGroupName"] = parent_object
        self.objects.append(
            {
                "apiVersion": COMPOSITE_API_VERSION,
                "kind": COMPOSITE_KIND,
                "metadata": metadata(self.plan, cpg),
                "spec": spec,
            }
        )
        out: dict[str, Any] = {"name": template, "schedulingPolicy": copy.deepcopy(policy), **common}
        if nodes:
            out["compositePodGroupTemplates"] = [
                self._composite_template(
                    gang,
                    self._name(object_name(n.name)),
                    n.name,
                    n.min_sub_group,
                    required,
                    parent_object=cpg,
                )
                for n in nodes
            ]
        if members:
            pgts: list[dict[str, Any]] = []
            for m in members:
                name = self._name(object_name(m.task))
                pg_common = self._common(gang, list(m.shared_claims), with_topology=False)
                pg_policy = self._policy(required[(m.component, m.instance_id)])
                pg = self._pod_group(name, pg_policy, pg_common, cpg)
                self._link([m], pg)
                pgts.append(
                    {
                        "name": name,
                        "schedulingPolicy": self._policy(required[(m.component, m.instance_id)]),
                        **pg_common,
                    }
                )
            out["podGroupTemplates"] = pgts
        return out

    def _node_required(self, gang: Gang, node: str, required: dict[tuple[str, str], int]) -> bool:
        for child in gang.children(node):
            if isinstance(child, GangMember):
                if required[(child.component, child.instance_id)] > 0:
                    return True
            elif self._node_required(gang, child.name, required):
                return True
        return False


def _one_subgroup_at_a_time(gang: Gang) -> bool:
    """Members straight under the gang, several of them, and only one required at a time."""
    return gang.min_sub_group == 1 and not gang.nodes and len(gang.members) > 1 and gang.replica_split is None


def _template_count(gang: Gang) -> int:
    return len(gang.members) if _one_subgroup_at_a_time(gang) else 1


def render(plan: GangPlan, options: RenderOptions) -> Rendered:
    b = _Builder(plan, options)
    if not plan.gangs:
        return Rendered("workload-api", notes=tuple(b.notes))
    for gang in plan.gangs:
        clash = task_names_unique(gang)
        if clash is not None:
            raise WorkloadApiLimitError(clash)
    nested = any(g.depth > 1 for g in plan.gangs)
    templates = len(plan.gangs) if nested else sum(_template_count(g) for g in plan.gangs)
    if templates > MAX_TEMPLATES:
        raise WorkloadApiLimitError(
            f"{plan.kind}/{plan.name}: {templates} pod groups, the Workload API allows at most "
            f"{MAX_TEMPLATES} templates"
        )
    ref: dict[str, Any] = {"apiGroup": plan.group, "kind": plan.kind, "name": plan.name}
    if not plan.group:
        del ref["apiGroup"]
    spec: dict[str, Any] = {"controllerRef": ref}
    pod_groups_start = len(b.objects)
    if nested:
        spec["compositePodGroupTemplates"] = [b.composite(g) for g in plan.gangs]
    else:
        spec["podGroupTemplates"] = [t for g in plan.gangs for t in b.flat(g)]
    workload = {
        "apiVersion": API_VERSION,
        "kind": WORKLOAD_KIND,
        "metadata": metadata(plan, b.workload),
        "spec": spec,
    }
    objects = [workload, *b.objects[pod_groups_start:]]
    return Rendered("workload-api", tuple(objects), tuple(b.changes), notes=tuple(b.notes), links=b.links)
