"""What the exporter keeps of each object it caches, applied on arrival (informer transforms).

At cluster scale the informer stores are the exporter's memory: pods and the owners between
workloads and pods outnumber workloads ten to one, and their specs (env, volumes, probes, the pod
templates of every ReplicaSet) are never read. So:

- every object loses ``metadata.managedFields`` and the
  ``kubectl.kubernetes.io/last-applied-configuration`` annotation (a second copy of the spec);
- an intermediate owner (a kind no definition covers: ReplicaSet, Revision, PodClique...) keeps
  only its identity and owner references, all the owner walk reads;
- a pod keeps its metadata and what attribution, resource totals and pod status read: per
  container ``name``, ``resources`` and ``restartPolicy``; ``nodeName``, scheduling fields,
  ``overhead`` and ``resourceClaims``; ``status`` without ``podIPs``/``hostIP``-style addresses;
- a workload object (a covered kind) is kept whole: its definition may read any field.

A definition whose pod selectors read other pod fields (``.spec.containers[].image``, volumes...)
sees them absent in the exporter only; docs/metrics.md says so.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["LAST_APPLIED", "STUB_KEY", "stub", "trim_owner", "trim_pod", "trim_workload"]

Obj = dict[str, Any]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
#: Marks a pod kept as identity only because another exporter shard renders its workload.
STUB_KEY = "__wmapShardStub"
_OWNER_META = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "labels",
    "ownerReferences",
    "deletionTimestamp",
    "creationTimestamp",
)
_POD_SPEC = (
    "nodeName",
    "schedulerName",
    "priority",
    "priorityClassName",
    "preemptionPolicy",
    "overhead",
    "resourceClaims",
    "restartPolicy",
    "readinessGates",
)
_CONTAINER = ("name", "resources", "restartPolicy")
_POD_STATUS = (
    "phase",
    "reason",
    "message",
    "conditions",
    "nominatedNodeName",
    "startTime",
    "containerStatuses",
    "initContainerStatuses",
    "qosClass",
)


def _interned(value: Any) -> Any:
    """Short strings shared by thousands of objects (namespaces, label values, owner kinds,
    quantities) as one object each: the JSON decoder makes a new string per occurrence."""
    if isinstance(value, str):
        return sys.intern(value) if len(value) <= 64 else value
    if isinstance(value, dict):
        return {k: _interned(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_interned(v) for v in value]
    return value


def _clean_metadata(obj: Obj) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return {}
    meta.pop("managedFields", None)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
    for key in ("namespace", "labels", "ownerReferences"):
        if key in meta:
            meta[key] = _interned(meta[key])
    return meta


def trim_workload(obj: Obj) -> Obj:
    _clean_metadata(obj)
    return obj


def trim_owner(obj: Obj) -> Obj:
    meta = _clean_metadata(obj)
    out: Obj = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    out["metadata"] = {k: meta[k] for k in _OWNER_META if k in meta}
    return out


def _containers(value: Any) -> list[Any]:
    if not isinstance(value, list):
        return []
    return [{k: c[k] for k in _CONTAINER if k in c} if isinstance(c, dict) else c for c in value]


def trim_pod(obj: Obj) -> Obj:
    _clean_metadata(obj)
    out: Obj = {k: obj[k] for k in ("apiVersion", "kind", "metadata") if k in obj}
    spec = obj.get("spec")
    if isinstance(spec, dict):
        kept = {k: spec[k] for k in _POD_SPEC if k in spec}
        for key in ("containers", "initContainers"):
            if key in spec:
                kept[key] = _containers(spec[key])
        out["spec"] = _interned(kept)
    status = obj.get("status")
    if isinstance(status, dict):
        out["status"] = _interned({k: status[k] for k in _POD_STATUS if k in status})
    return out


def stub(obj: Obj) -> Obj:
    """An object this exporter only climbs through (another shard's, or owned by a covered
    kind): what the owner walk and the informer read, marked."""
    meta = _clean_metadata(obj)
    kept: dict[str, Any] = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion") if k in meta}
    refs = meta.get("ownerReferences")
    if isinstance(refs, list):
        kept["ownerReferences"] = [
            {k: r[k] for k in ("apiVersion", "kind", "name", "uid", "controller") if k in r}
            for r in refs
            if isinstance(r, dict)
        ]
    out: Obj = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    out["metadata"] = kept
    out[STUB_KEY] = True
    return out
