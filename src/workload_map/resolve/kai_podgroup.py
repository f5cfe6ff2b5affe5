"""The whole PodGroup object KAI Scheduler's pod-grouper creates from a :class:`PodGroupPlan`.

The plan gives the gang (name, minMember or minSubGroup, subgroups, topology); this module adds
what KAI's default grouper puts around it (consumers.md 1.4, KAI ``defaultgrouper`` and
``podgroup.Handler``), from the top owner and the pod alone:

* metadata: the pod's namespace; the top owner's labels (plus the pod's ``user`` label when the
  owner has none) and annotations (plus the pod's ``user`` annotation and
  ``kai.scheduler/top-owner-metadata``, the owner's name, uid, group, version and kind as YAML);
  one owner reference to the top owner (apiVersion, kind, name, uid; no controller flag).
* ``spec.queue``: the ``kai.scheduler/queue`` label on the top owner, then on the pod; else the
  ``project`` label (owner, then pod) suffixed with the pod's ``kai.scheduler/node-pool`` label;
  else ``default-queue``.
* ``spec.priorityClassName``: the ``priorityClassName`` label on the owner, then the pod, then
  the pod's ``spec.priorityClassName``, if such a PriorityClass exists (``priority_class_exists``;
  without it every name is taken to exist); else ``train``.
* ``spec.preemptibility``: a valid ``kai.scheduler/preemptibility`` label on the owner, then the
  pod; else unset (KAI then decides by the priority's value).

KAI's per-workload-type defaults ConfigMap (priority and preemptibility per kind) is cluster
configuration this module does not see; a cluster that sets it gets those values instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from workload_map.kube.objects import (
    annotations_of,
    labels_of,
    meta,
    name_of,
    namespace_of,
    split_api_version,
    uid_of,
)
from workload_map.model.definition import Topology
from workload_map.resolve.gangs import PodGroupPlan, SubGroupPlan

KAI_PODGROUP_API_VERSION = "scheduling.run.ai/v2alpha2"
KAI_PODGROUP_KIND = "PodGroup"
QUEUE_LABEL = "kai.scheduler/queue"
NODE_POOL_LABEL = "kai.scheduler/node-pool"
PROJECT_LABEL = "project"
USER_KEY = "user"
PRIORITY_LABEL = "priorityClassName"
PREEMPTIBILITY_LABEL = "kai.scheduler/preemptibility"
TOP_OWNER_METADATA_ANNOTATION = "kai.scheduler/top-owner-metadata"
DEFAULT_QUEUE = "default-queue"
DEFAULT_PRIORITY_CLASS = "train"
PREEMPTIBILITY_VALUES = ("preemptible", "non-preemptible")

#: ``exists(name) -> bool`` for PriorityClass names.
PriorityClassCheck = Callable[[str], bool]


_PLAIN_SCALAR = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
_YAML_SPECIAL = frozenset({"true", "false", "null", "yes", "no", "on", "off", "~"})


def _yaml_scalar(value: str) -> str:
    """A string as yaml.v3 writes it: plain when unambiguous, else double-quoted."""
    if _PLAIN_SCALAR.match(value) and value.lower() not in _YAML_SPECIAL and not _looks_numeric(value):
        return value
    return json.dumps(value)


def _looks_numeric(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _top_owner_metadata(top: Mapping[str, Any]) -> str:
    """KAI's ``topowner.Metadata`` marshalled by yaml.v3 (the five keys in this order)."""
    group, version = split_api_version(str(top.get("apiVersion") or ""))
    doc = {
        "name": name_of(top),
        "uid": uid_of(top),
        "group": group,
        "version": version,
        "kind": top.get("kind") or "",
    }
    return "".join(f"{k}: {_yaml_scalar(str(v))}\n" for k, v in doc.items())


def queue_of(top: Mapping[str, Any], pod: Mapping[str, Any]) -> str:
    owner_labels, pod_labels = labels_of(top), labels_of(pod)
    for labels in (owner_labels, pod_labels):
        if QUEUE_LABEL in labels:
            return labels[QUEUE_LABEL]
    project = owner_labels.get(PROJECT_LABEL) or pod_labels.get(PROJECT_LABEL) or ""
    if project:
        pool = pod_labels.get(NODE_POOL_LABEL)
        return f"{project}-{pool}" if pool is not None else project
    return DEFAULT_QUEUE


def priority_class_of(
    top: Mapping[str, Any], pod: Mapping[str, Any], exists: PriorityClassCheck | None = None
) -> str:
    owner_labels, pod_labels = labels_of(top), labels_of(pod)
    spec = pod.get("spec")
    pod_spec_name = spec.get("priorityClassName") if isinstance(spec, Mapping) else None
    name = owner_labels.get(PRIORITY_LABEL) or pod_labels.get(PRIORITY_LABEL)
    if name is None and isinstance(pod_spec_name, str):
        name = pod_spec_name
    if name and (exists is None or exists(name)):
        return name
    return DEFAULT_PRIORITY_CLASS


def preemptibility_of(top: Mapping[str, Any], pod: Mapping[str, Any]) -> str | None:
    for obj in (top, pod):
        value = labels_of(obj).get(PREEMPTIBILITY_LABEL)
        if value in PREEMPTIBILITY_VALUES:
            return value
    return None


def topology_constraint(plan_topology: Topology | None) -> dict[str, str] | None:
    """A plan's topology as KAI's ``topologyConstraint`` (empty levels left out; ``None``: none)."""
    if plan_topology is None:
        return None
    out = {
        "topology": plan_topology.topology_name,
        "requiredTopologyLevel": plan_topology.required_topology_level,
        "preferredTopologyLevel": plan_topology.preferred_topology_level,
    }
    out = {k: v for k, v in out.items() if v}
    return out or None


def _sub_group(sg: SubGroupPlan) -> dict[str, Any]:
    out: dict[str, Any] = {"name": sg.name}
    if sg.parent is not None:
        out["parent"] = sg.parent
    if sg.min_sub_group is not None:
        out["minSubGroup"] = sg.min_sub_group
    else:
        out["minMember"] = sg.min_member
    topo = topology_constraint(sg.topology)
    if topo:
        out["topologyConstraint"] = topo
    return out


def pod_group_object(
    plan: PodGroupPlan,
    top: Mapping[str, Any],
    pod: Mapping[str, Any],
    *,
    priority_class_exists: PriorityClassCheck | None = None,
) -> dict[str, Any]:
    """The ``scheduling.run.ai/v2alpha2`` PodGroup KAI creates for ``pod`` (see module doc)."""
    top_meta = meta(top)
    labels = labels_of(top)
    pod_labels = labels_of(pod)
    if USER_KEY not in labels and USER_KEY in pod_labels:
        labels[USER_KEY] = pod_labels[USER_KEY]
    annotations: dict[str, str] = {}
    pod_user = annotations_of(pod).get(USER_KEY)
    if pod_user is not None:
        annotations[USER_KEY] = pod_user
    annotations[TOP_OWNER_METADATA_ANNOTATION] = _top_owner_metadata(top)
    annotations.update(annotations_of(top))
    metadata: dict[str, Any] = {"name": plan.name, "namespace": namespace_of(pod)}
    if labels:
        metadata["labels"] = labels
    metadata["annotations"] = annotations
    metadata["ownerReferences"] = [
        {
            "apiVersion": top.get("apiVersion"),
            "kind": top.get("kind"),
            "name": top_meta.get("name"),
            "uid": top_meta.get("uid"),
        }
    ]
    spec: dict[str, Any] = {
        "queue": queue_of(top, pod),
        "priorityClassName": priority_class_of(top, pod, priority_class_exists),
    }
    preemptibility = preemptibility_of(top, pod)
    if preemptibility is not None:
        spec["preemptibility"] = preemptibility
    if plan.min_sub_group is not None:
        spec["minSubGroup"] = plan.min_sub_group
    else:
        spec["minMember"] = plan.min_available
    if plan.sub_groups:
        spec["subGroups"] = [_sub_group(sg) for sg in plan.sub_groups]
    topo = topology_constraint(plan.topology)
    if topo:
        spec["topologyConstraint"] = topo
    return {
        "apiVersion": KAI_PODGROUP_API_VERSION,
        "kind": KAI_PODGROUP_KIND,
        "metadata": metadata,
        "spec": spec,
    }


__all__ = [
    "DEFAULT_PRIORITY_CLASS",
    "DEFAULT_QUEUE",
    "KAI_PODGROUP_API_VERSION",
    "KAI_PODGROUP_KIND",
    "PriorityClassCheck",
    "pod_group_object",
    "preemptibility_of",
    "priority_class_of",
    "queue_of",
    "topology_constraint",
]
