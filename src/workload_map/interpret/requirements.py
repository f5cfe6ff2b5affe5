"""``InterpretReplica`` and ``InterpretComponent``: how many pods a workload asks for and what
each one needs, in Karmada's ``ReplicaRequirements`` / ``Component`` shapes.

Everything comes from :func:`workload_map.resolve.placement.instance_needs` (the same per-instance
needs ``wmap requirements --fit`` places), per instance of every component with a pod definition
whose pod spec the object declares (an optional role the object leaves out, e.g. a PyTorchJob
without ``Master``, is not a component of *this* object):

* ``InterpretComponent``: one component per such instance, in declaration order, with its desired
  replicas (``replicas``, else ``minReplicas``, else 1) and one pod's requirements. Names: the
  instance id for a component with ``instanceIdPath`` (a RayCluster's worker group name), else the
  definition's component name; a name longer than Karmada's limit (32 characters) or already taken
  becomes ``<name cut>-<n>`` (see :func:`component_names`).
* ``InterpretReplica``: the sum of those replicas, and one replica's requirements when a replica
  may be any of the pod shapes: per resource the largest request; node claim and priority class
  of the first component (the root or leader role, as Karmada's own RayService interpreter takes
  the head's); the workload's namespace.

A requirement holds only what is set: ``nodeClaim`` (``hardNodeAffinity`` = required node affinity,
``nodeSelector``, ``tolerations``) when any of them is, ``resourceRequest`` when any request is
positive (cpu in millis, memory/ephemeral-storage/hugepages binary, others decimal, as Karmada
prints them; DRA claims are not resources), ``priorityClassName`` when set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workload_map.resolve.placement import InstanceNeeds
from workload_map.resolve.resources import max_totals

#: Karmada's ``Component.name`` limit (``+kubebuilder:validation:MaxLength=32``).
MAX_COMPONENT_NAME = 32

Requirements = dict[str, Any]


def node_claim(inst: InstanceNeeds) -> dict[str, Any] | None:
    """Karmada's ``NodeClaim`` of one instance's pods, or None when it constrains nothing."""
    claim: dict[str, Any] = {}
    hard = inst.hard_node_affinity
    if hard is not None:
        claim["hardNodeAffinity"] = dict(hard)
    if inst.node_selector:
        claim["nodeSelector"] = dict(inst.node_selector)
    if inst.tolerations:
        claim["tolerations"] = list(inst.tolerations)
    return claim or None


def _requirements(first: InstanceNeeds, request: dict[str, str], namespace: str | None) -> Requirements:
    out: Requirements = {}
    claim = node_claim(first)
    if claim is not None:
        out["nodeClaim"] = claim
    if request:
        out["resourceRequest"] = request
    if namespace:
        out["namespace"] = namespace
    if first.priority_class_name:
        out["priorityClassName"] = first.priority_class_name
    return out


def declared(needs: Sequence[InstanceNeeds]) -> list[InstanceNeeds]:
    """The instances whose pod spec the object holds (the components Karmada is told about)."""
    return [n for n in needs if n.declared]


def replica_answer(needs: Sequence[InstanceNeeds], namespace: str | None) -> tuple[int, Requirements | None]:
    """``InterpretReplica``: (replicas, requirements of one replica or None)."""
    pods = declared(needs)
    if not pods:
        return 0, None
    total = sum(n.desired_replicas for n in pods)
    request = max_totals(n.pod_requests for n in pods).to_resource_list()
    return total, _requirements(pods[0], request, namespace) or None


def _cut(name: str, length: int) -> str:
    return name[:length]


def component_names(natural: Sequence[str]) -> list[str]:
    """Unique names of at most :data:`MAX_COMPONENT_NAME` characters, in order: each natural name
    as is when it fits and is not taken yet, else ``<name cut>-<k>`` with ``k`` its position (then
    position + n, + 2n... until free), cut so the whole fits."""
    used: set[str] = set()
    out: list[str] = []
    n = len(natural)
    for i, name in enumerate(natural):
        candidate = name
        k = i
        while len(candidate) > MAX_COMPONENT_NAME or candidate in used:
            suffix = f"-{k}"
            candidate = _cut(name, MAX_COMPONENT_NAME - len(suffix)) + suffix
            k += n
        used.add(candidate)
        out.append(candidate)
    return out


def natural_name(inst: InstanceNeeds, multi_instance: bool) -> str:
    """The instance id of a multi-instance component, else the component name."""
    return inst.instance_id if multi_instance and inst.instance_id else inst.component


def components_answer(needs: Sequence[InstanceNeeds], multi_instance: frozenset[str]) -> list[dict[str, Any]]:
    """``InterpretComponent``: Karmada ``Component`` objects; ``multi_instance`` names the
    components that have an ``instanceIdPath``."""
    pods = declared(needs)
    names = component_names([natural_name(n, n.component in multi_instance) for n in pods])
    out: list[dict[str, Any]] = []
    for name, inst in zip(names, pods, strict=True):
        entry: dict[str, Any] = {"name": name, "replicas": inst.desired_replicas}
        requirements = _requirements(inst, inst.pod_requests.to_resource_list(), None)
        if requirements:
            entry["replicaRequirements"] = requirements
        out.append(entry)
    return out
