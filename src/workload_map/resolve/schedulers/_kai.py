"""KAI Scheduler's external PodGroups: the ``scheduling.run.ai/v2alpha2`` PodGroup of each gang,
for a workload whose pods KAI's pod-grouper is told to skip (``kai.scheduler/skip-podgrouper``
on the workload, the path KAI documents for external PodGroups). KAI's own pod-grouper, which
reads the definition per pod, is :func:`workload_map.resolve.kai_podgroup.pod_group_object`
(``wmap group``); this renders the same whole-workload plan every other scheduler gets.

* ``queue``: the plan's, else KAI's own rule on the workload's labels (``kai.scheduler/queue``,
  ``project``, ``default-queue``); ``priorityClassName``: the workload's ``priorityClassName``
  label, else the plan's, else ``train``; ``preemptibility`` from its label;
* one gang member: ``minMember``; several: ``subGroups`` (a leaf per pod template with its
  required pods, a parent per subgroup with ``minSubGroup``) under ``minMember`` (or
  ``minSubGroup`` when the plan requires only some subgroups);
* the gang's topology as ``topologyConstraint``.

Pods join through the ``pod-group-name`` annotation, the ``kai.scheduler/subgroup-name`` label
and the ``kai-scheduler`` scheduler name.
"""

from __future__ import annotations

from typing import Any

from workload_map.kube.objects import labels_of
from workload_map.kube.schedulers import (
    KAI_SCHEDULER_NAME,
    KAI_SKIP_PODGROUPER_ANNOTATION,
)
from workload_map.resolve.gang_expressions import NO_POD
from workload_map.resolve.gang_plan import Gang, GangMember, GangNode, GangPlan
from workload_map.resolve.gangs import POD_GROUP_ANNOTATION, SUBGROUP_LABEL
from workload_map.resolve.kai_podgroup import (
    DEFAULT_PRIORITY_CLASS,
    KAI_PODGROUP_API_VERSION,
    KAI_PODGROUP_KIND,
    PRIORITY_LABEL,
    preemptibility_of,
    queue_of,
    topology_constraint,
)
from workload_map.resolve.schedulers._common import (
    Rendered,
    RenderOptions,
    TemplateChange,
    WorkloadChange,
    link_all,
    metadata,
    no_uid_note,
    task_names_unique,
)

SKIP_PODGROUPER_ANNOTATION = KAI_SKIP_PODGROUPER_ANNOTATION
SCHEDULER_NAME = KAI_SCHEDULER_NAME


def _owner(plan: GangPlan) -> dict[str, Any]:
    return {"metadata": {"labels": dict(plan.labels)}}


def _sub_groups(gang: Gang) -> list[dict[str, Any]]:
    required = dict(zip(((m.component, m.instance_id) for m in gang.members), gang.required, strict=True))
    out: list[dict[str, Any]] = []

    def needed(node: str) -> int:
        return sum(
            1
            for c in gang.children(node)
            if (isinstance(c, GangMember) and required[(c.component, c.instance_id)] > 0)
            or (isinstance(c, GangNode) and needed(c.name) > 0)
        )

    for node in gang.nodes:
        entry: dict[str, Any] = {"name": node.name}
        if node.parent is not None:
            entry["parent"] = node.parent
        entry["minSubGroup"] = node.min_sub_group if node.min_sub_group is not None else needed(node.name)
        out.append(entry)
    for m in gang.members:
        entry = {"name": m.task}
        if m.parent is not None:
            entry["parent"] = m.parent
        entry["minMember"] = required[(m.component, m.instance_id)]
        out.append(entry)
    return out


def _pod_group(plan: GangPlan, gang: Gang) -> dict[str, Any]:
    owner = _owner(plan)
    spec: dict[str, Any] = {"queue": plan.policy.queue or queue_of(owner, NO_POD)}
    spec["priorityClassName"] = (
        labels_of(owner).get(PRIORITY_LABEL) or plan.policy.priority_class_name or DEFAULT_PRIORITY_CLASS
    )
    preemptibility = preemptibility_of(owner, NO_POD)
    if preemptibility is not None:
        spec["preemptibility"] = preemptibility
    subgrouped = len(gang.members) > 1 or bool(gang.nodes)
    top = len(gang.children(None))
    if subgrouped and gang.min_sub_group is not None and gang.min_sub_group < top:
        spec["minSubGroup"] = gang.min_sub_group
    else:
        spec["minMember"] = gang.min_member
    if subgrouped:
        spec["subGroups"] = _sub_groups(gang)
    topo = topology_constraint(gang.topology)
    if topo:
        spec["topologyConstraint"] = topo
    return {
        "apiVersion": KAI_PODGROUP_API_VERSION,
        "kind": KAI_PODGROUP_KIND,
        "metadata": metadata(plan, gang.name),
        "spec": spec,
    }


def render(plan: GangPlan, options: RenderOptions) -> Rendered:
    notes: list[str] = list(no_uid_note(plan))
    objects: list[dict[str, Any]] = []
    changes: list[TemplateChange] = []
    links: dict[tuple[str, str], tuple[str, str, str]] = {}
    scheduler = options.scheduler_name or SCHEDULER_NAME
    for gang in plan.gangs:
        clash = task_names_unique(gang)
        if clash is not None:
            notes.append(clash + ": no PodGroup")
            continue
        if gang.min_member < 1:
            notes.append(f"gang {gang.name} needs 0 pods: KAI's PodGroup takes minMember >= 1, no PodGroup")
            continue
        if gang.replica_split is not None:
            notes.append(
                f"gang {gang.name}: KAI's own pod-grouper gives each replica of "
                f"{gang.replica_split.component} a PodGroup; this external one holds them all"
            )
        objects.append(_pod_group(plan, gang))
        links.update(link_all(gang.members, KAI_PODGROUP_API_VERSION, KAI_PODGROUP_KIND, gang.name))
        subgrouped = len(gang.members) > 1 or bool(gang.nodes)
        for m in gang.members:
            changes.append(
                TemplateChange(
                    m.component,
                    m.instance_id,
                    labels={SUBGROUP_LABEL: m.task} if subgrouped else {},
                    annotations={POD_GROUP_ANNOTATION: gang.name},
                    scheduler_name=scheduler,
                )
            )
    change = WorkloadChange(annotations={SKIP_PODGROUPER_ANNOTATION: "true"}) if objects else WorkloadChange()
    return Rendered("kai", tuple(objects), tuple(changes), change, tuple(notes), links)
