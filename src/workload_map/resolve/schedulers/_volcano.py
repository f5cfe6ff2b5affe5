"""Volcano: one ``scheduling.volcano.sh/v1beta1`` PodGroup per gang.

* ``minMember`` (per replica for a gang that repeats per replica), ``minResources``;
* ``queue``: the plan's, else the workload's ``scheduling.volcano.sh/queue-name`` annotation
  (Volcano's own key), else its ``volcano.sh/queue-name`` label (KubeRay's), else ``default``
  (the CRD's default, written out);
* ``priorityClassName``: the plan's;
* ``minTaskMember``: each member's required pods, when the definition declares subgroups and
  every one of them is required (Volcano has no "k of n" for tasks), and the gang does not
  repeat per replica (then ``subGroupPolicy``: Volcano advises against using both);
* ``subGroupPolicy``: for a gang repeated per replica, one entry whose ``matchLabelKeys`` is the
  controller's replica label, ``subGroupSize`` the replica's pods, at least one replica;
* ``networkTopology``: the workload's ``volcano.sh/network-topology-mode`` and
  ``volcano.sh/network-topology-highest-tier-allowed`` labels (the keys KubeRay reads).

Pods join through the ``scheduling.k8s.io/group-name`` and ``volcano.sh/task-spec`` annotations
and the ``volcano`` scheduler name.
"""

from __future__ import annotations

from typing import Any

from workload_map.kube.schedulers import (
    VOLCANO_API_VERSION,
    VOLCANO_DEFAULT_QUEUE,
    VOLCANO_GROUP_NAME_ANNOTATION,
    VOLCANO_NETWORK_TOPOLOGY_MODE_LABEL,
    VOLCANO_NETWORK_TOPOLOGY_TIER_LABEL,
    VOLCANO_QUEUE_ANNOTATION,
    VOLCANO_QUEUE_LABEL,
    VOLCANO_SCHEDULER_NAME,
    VOLCANO_TASK_SPEC_ANNOTATION,
)
from workload_map.resolve.gang_plan import Gang, GangPlan
from workload_map.resolve.schedulers._common import (
    Rendered,
    RenderOptions,
    TemplateChange,
    link_all,
    metadata,
    min_resources,
    no_uid_note,
)

API_VERSION = VOLCANO_API_VERSION
KIND = "PodGroup"
GROUP_NAME_ANNOTATION = VOLCANO_GROUP_NAME_ANNOTATION
TASK_SPEC_ANNOTATION = VOLCANO_TASK_SPEC_ANNOTATION
QUEUE_ANNOTATION = VOLCANO_QUEUE_ANNOTATION
QUEUE_LABEL = VOLCANO_QUEUE_LABEL
NETWORK_TOPOLOGY_MODE_LABEL = VOLCANO_NETWORK_TOPOLOGY_MODE_LABEL
NETWORK_TOPOLOGY_TIER_LABEL = VOLCANO_NETWORK_TOPOLOGY_TIER_LABEL
DEFAULT_QUEUE = VOLCANO_DEFAULT_QUEUE
SCHEDULER_NAME = VOLCANO_SCHEDULER_NAME


def _queue(plan: GangPlan) -> str:
    return (
        plan.policy.queue
        or plan.annotations.get(QUEUE_ANNOTATION)
        or plan.labels.get(QUEUE_LABEL)
        or DEFAULT_QUEUE
    )


def _network_topology(plan: GangPlan, notes: list[str]) -> dict[str, Any] | None:
    mode = plan.labels.get(NETWORK_TOPOLOGY_MODE_LABEL)
    if mode is None:
        return None
    if mode not in ("hard", "soft"):
        notes.append(f"label {NETWORK_TOPOLOGY_MODE_LABEL}={mode!r} is not hard or soft: no networkTopology")
        return None
    out: dict[str, Any] = {"mode": mode}
    tier = plan.labels.get(NETWORK_TOPOLOGY_TIER_LABEL)
    if tier is not None:
        if not tier.isdigit() or len(tier) > 9:
            notes.append(
                f"label {NETWORK_TOPOLOGY_TIER_LABEL}={tier!r} is not a whole number: "
                "highestTierAllowed left out"
            )
        else:
            out["highestTierAllowed"] = int(tier)
    return out


def _pod_group(plan: GangPlan, gang: Gang, notes: list[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": gang.min_member, "queue": _queue(plan)}
    res = min_resources(plan, gang)
    if res:
        spec["minResources"] = res
    if plan.policy.priority_class_name:
        spec["priorityClassName"] = plan.policy.priority_class_name
    if (
        gang.declared_sub_groups
        and gang.min_sub_group is None
        and gang.replica_split is None  # subGroupPolicy then; Volcano advises against both
        and len(gang.members) > 1
    ):
        spec["minTaskMember"] = {m.task: n for m, n in zip(gang.members, gang.required, strict=True) if n}
    split = gang.replica_split
    if split is not None:
        if split.label_key is None:
            notes.append(
                f"gang {gang.name}: the replicas of {split.component} are not told apart by a pod label "
                "the definition names, so Volcano cannot gang each replica (subGroupPolicy left out)"
            )
        else:
            spec["subGroupPolicy"] = [
                {
                    "name": split.component,
                    "subGroupSize": max(split.size, 1),
                    "minSubGroups": 1,
                    "matchLabelKeys": [split.label_key],
                }
            ]
    topology = _network_topology(plan, notes)
    if topology is not None:
        spec["networkTopology"] = topology
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata(plan, gang.name), "spec": spec}


def render(plan: GangPlan, options: RenderOptions) -> Rendered:
    notes: list[str] = list(no_uid_note(plan))
    objects: list[dict[str, Any]] = []
    changes: list[TemplateChange] = []
    links: dict[tuple[str, str], tuple[str, str, str]] = {}
    scheduler = options.scheduler_name or SCHEDULER_NAME
    for gang in plan.gangs:
        objects.append(_pod_group(plan, gang, notes))
        links.update(link_all(gang.members, API_VERSION, KIND, gang.name))
        for m in gang.members:
            changes.append(
                TemplateChange(
                    m.component,
                    m.instance_id,
                    annotations={GROUP_NAME_ANNOTATION: gang.name, TASK_SPEC_ANNOTATION: m.task},
                    scheduler_name=scheduler,
                )
            )
    return Rendered("volcano", tuple(objects), tuple(changes), notes=tuple(notes), links=links)
