"""scheduler-plugins coscheduling: one ``scheduling.x-k8s.io/v1alpha1`` PodGroup per gang
(``minMember``, ``minResources``, ``scheduleTimeoutSeconds`` from the plan's policy). Pods join
through the ``scheduling.x-k8s.io/pod-group`` label and the scheduler-plugins scheduler name
(``scheduler-plugins-scheduler``, its second-scheduler install; ``RenderOptions.scheduler_name``
for another). Coscheduling has no subgroups and needs ``minMember`` >= 1: a gang of 0 pods gets
no PodGroup, a gang repeated per replica is one gang of one replica's size (both noted)."""

from __future__ import annotations

from typing import Any

from workload_map.kube.schedulers import (
    COSCHEDULING_API_VERSION,
    COSCHEDULING_POD_GROUP_LABEL,
    COSCHEDULING_SCHEDULER_NAME,
)
from workload_map.resolve.gang_plan import GangPlan
from workload_map.resolve.schedulers._common import (
    Rendered,
    RenderOptions,
    TemplateChange,
    link_all,
    metadata,
    min_resources,
    no_uid_note,
)

API_VERSION = COSCHEDULING_API_VERSION
KIND = "PodGroup"
POD_GROUP_LABEL = COSCHEDULING_POD_GROUP_LABEL
SCHEDULER_NAME = COSCHEDULING_SCHEDULER_NAME


def render(plan: GangPlan, options: RenderOptions) -> Rendered:
    notes: list[str] = list(no_uid_note(plan))
    objects: list[dict[str, Any]] = []
    changes: list[TemplateChange] = []
    links: dict[tuple[str, str], tuple[str, str, str]] = {}
    scheduler = options.scheduler_name or SCHEDULER_NAME
    for gang in plan.gangs:
        if gang.min_member < 1:
            notes.append(f"gang {gang.name} needs 0 pods: coscheduling takes minMember >= 1, no PodGroup")
            continue
        if gang.replica_split is not None:
            notes.append(
                f"gang {gang.name}: coscheduling has no subgroups, so each replica of "
                f"{gang.replica_split.component} is not a gang of its own "
                f"({gang.min_member} pods of any replica)"
            )
        spec: dict[str, Any] = {"minMember": gang.min_member}
        res = min_resources(plan, gang)
        if res:
            spec["minResources"] = res
        if plan.policy.schedule_timeout_seconds is not None:
            spec["scheduleTimeoutSeconds"] = plan.policy.schedule_timeout_seconds
        objects.append(
            {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata(plan, gang.name), "spec": spec}
        )
        links.update(link_all(gang.members, API_VERSION, KIND, gang.name))
        for m in gang.members:
            changes.append(
                TemplateChange(
                    m.component, m.instance_id, labels={POD_GROUP_LABEL: gang.name}, scheduler_name=scheduler
                )
            )
    return Rendered("coscheduling", tuple(objects), tuple(changes), notes=tuple(notes), links=links)
