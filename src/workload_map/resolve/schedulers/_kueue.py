"""Kueue: one ``kueue.x-k8s.io/v1beta2`` Workload per workload whose definition can suspend it
(Kueue holds a workload by keeping it suspended until it is admitted).

* ``podSets``: one per pod template of the workload (every component instance, gang or not), in
  definition order: ``name`` its task name, ``count`` its desired pods, ``template`` its pod
  template (metadata cut to labels and annotations, the spec to PodSpec fields, as the CRD
  allows). ``minCount`` (partial admission) on the one pod template whose minimum is below its
  count; Kueue allows it on one podSet only, so with several elastic templates none gets it
  (noted). At most 18 podSets.
  A gang's topology level becomes each of its podSets' ``topologyRequest``.
* ``queueName``: the plan's queue, else the workload's ``kueue.x-k8s.io/queue-name`` label.
* ``priorityClassRef`` + ``priority`` for the plan's PriorityClass when its value is known (the
  CRD requires both together).

The workload change is the definition's suspend actions plus the queue label; Kueue itself (the
admission a later controller plays) writes the admitted flavors into the templates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workload_map.kube.schedulers import (
    KUEUE_API_VERSION,
    KUEUE_JOB_UID_LABEL,
    KUEUE_MAX_POD_SETS,
    KUEUE_QUEUE_LABEL,
    POD_SPEC_FIELDS,
)
from workload_map.resolve.gang_plan import GangMember, GangPlan, object_name
from workload_map.resolve.gangs import GangError
from workload_map.resolve.schedulers._common import (
    Rendered,
    RenderOptions,
    WorkloadChange,
    metadata,
    no_uid_note,
)

API_VERSION = KUEUE_API_VERSION
KIND = "Workload"
QUEUE_LABEL = KUEUE_QUEUE_LABEL
JOB_UID_LABEL = KUEUE_JOB_UID_LABEL
MAX_POD_SETS = KUEUE_MAX_POD_SETS


class KueueLimitError(GangError):
    """The workload does not fit a Kueue Workload."""


def _template(m: GangMember, notes: list[str]) -> dict[str, Any] | None:
    tpl = m.pod_template
    if tpl is None:
        return None
    out: dict[str, Any] = {}
    meta = tpl.get("metadata")
    if isinstance(meta, Mapping):
        kept = {k: dict(meta[k]) for k in ("labels", "annotations") if isinstance(meta.get(k), Mapping)}
        if kept:
            out["metadata"] = kept
    spec = tpl.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    dropped = sorted(k for k in spec if k not in POD_SPEC_FIELDS)
    if dropped:
        notes.append(f"{m.task}: {', '.join(dropped)} are not pod spec fields, left out of its podSet")
    out["spec"] = {k: v for k, v in spec.items() if k in POD_SPEC_FIELDS}
    return out


def _topology_request(plan: GangPlan, m: GangMember) -> dict[str, str] | None:
    gang = plan.gang_of(m.component, m.instance_id)
    topo = gang.topology if gang is not None else None
    if topo is None:
        return None
    if topo.required_topology_level:
        return {"required": topo.required_topology_level}
    if topo.preferred_topology_level:
        return {"preferred": topo.preferred_topology_level}
    return None


def render(plan: GangPlan, options: RenderOptions) -> Rendered:
    notes: list[str] = list(no_uid_note(plan))
    if not plan.suspend_actions:
        notes.append(
            f'definition "{plan.definition}" gives {plan.kind} no suspend actions: Kueue holds a '
            "workload by suspending it, so it gets no Kueue Workload"
        )
        return Rendered("kueue", notes=tuple(notes))
    members = [m for m in plan.pod_sets if m.pod_template is not None]
    for m in plan.pod_sets:
        if m.pod_template is None:
            notes.append(f"{m.component}: a fragmented pod spec is no pod template, so it is no podSet")
    if not members:
        notes.append(f"{plan.kind}/{plan.name} has no pod template: no Kueue Workload")
        return Rendered("kueue", notes=tuple(notes))
    if len(members) > MAX_POD_SETS:
        raise KueueLimitError(
            f"{plan.kind}/{plan.name}: {len(members)} pod templates, a Kueue Workload holds at most "
            f"{MAX_POD_SETS} podSets"
        )
    names = [m.task for m in members]
    if len(set(names)) != len(names):
        raise KueueLimitError(f"{plan.kind}/{plan.name}: two pod templates share the podSet name of {names}")
    elastic = [m for m in members if 0 < m.min_pods < m.desired_pods]
    if len(elastic) > 1:
        notes.append(
            "Kueue admits one podSet partially at most; "
            f"{', '.join(m.task for m in elastic)} all have a minimum below their count: no minCount"
        )
    pod_sets: list[dict[str, Any]] = []
    for m in members:
        ps: dict[str, Any] = {"name": m.task, "count": m.desired_pods, "template": _template(m, notes)}
        if len(elastic) == 1 and m is elastic[0]:
            ps["minCount"] = m.min_pods
        topo = _topology_request(plan, m)
        if topo is not None:
            ps["topologyRequest"] = topo
        pod_sets.append(ps)
    spec: dict[str, Any] = {"podSets": pod_sets}
    queue = plan.policy.queue or plan.labels.get(QUEUE_LABEL)
    if queue:
        spec["queueName"] = queue
    else:
        notes.append(f"no queue: set the {QUEUE_LABEL} label on {plan.kind}/{plan.name} or pass a queue")
    pc = plan.policy.priority_class_name
    if pc:
        value = options.priority_value(pc) if options.priority_value is not None else None
        if value is None:
            notes.append(f"PriorityClass {pc}: its value is unknown here, so the Workload names no priority")
        else:
            spec["priorityClassRef"] = {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": pc}
            spec["priority"] = value
    labels = {JOB_UID_LABEL: plan.uid} if plan.uid else None
    name = object_name(plan.kind.lower(), plan.name)
    workload = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": metadata(plan, name, labels),
        "spec": spec,
    }
    change = WorkloadChange(
        labels={QUEUE_LABEL: queue} if queue and plan.labels.get(QUEUE_LABEL) != queue else {},
        suspend_actions=plan.suspend_actions,
    )
    links = {(m.component, m.instance_id): (API_VERSION, KIND, name) for m in members}
    return Rendered("kueue", (workload,), (), change, tuple(notes), links)
