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
  and it is kept as a :class:`~workload_map.exporter.compact.CompactPod` (one object with slots,
  its status as JSON text) rather than as four dicts;
- a workload object (a covered kind) is kept whole: its definition may read any field;
- equal parts of many objects are kept once (:func:`shared`): the labels, annotations and owner
  references of the pods of one owner, the containers of the pods of one template. Stored objects
  are never mutated (the informer's rule), so sharing them changes nothing a reader sees.

A definition whose pod selectors read other pod fields (``.spec.containers[].image``, volumes...)
sees them absent in the exporter only; docs/metrics.md says so.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

from workload_map.exporter.compact import CompactPod

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


#: Distinct values :func:`shared` remembers; when full it starts over (sharing is only a saving).
SHARED_MAX = 16384
#: Values whose JSON is longer than this are kept as they are (unlikely to repeat; bounds the cache).
SHARED_KEY_MAX = 2048
_SHARED: dict[int, Any] = {}


def shared(value: Any) -> Any:
    """One object for every equal ``value`` (a dict or list, its strings interned): the 10,000 pods
    of a Deployment then hold one copy of their containers' resources, labels and owner
    references. Remembered by the hash of the canonical JSON and compared on a hit (a collision
    only costs the sharing). Thread-safe enough: two informer threads racing keep two copies."""
    if not isinstance(value, (dict, list)) or not value:
        return _interned(value)
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return _interned(value)
    if len(text) > SHARED_KEY_MAX:
        return _interned(value)
    key = hash(text)
    found = _SHARED.get(key)
    if found is not None and found == value:
        return found
    if len(_SHARED) >= SHARED_MAX:
        _SHARED.clear()
    value = _interned(value)
    _SHARED[key] = value
    return value


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
    if "namespace" in meta:
        meta["namespace"] = _interned(meta["namespace"])
    for key in ("labels", "annotations", "ownerReferences"):
        if key in meta:
            meta[key] = shared(meta[key])
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


def trim_pod(obj: Obj) -> CompactPod:
    _clean_metadata(obj)
    out: Obj = {k: obj[k] for k in ("apiVersion", "kind", "metadata") if k in obj}
    spec = obj.get("spec")
    if isinstance(spec, dict):
        kept = {k: _interned(spec[k]) for k in _POD_SPEC if k in spec}
        for key in ("overhead", "resourceClaims", "readinessGates"):
            if key in kept:
                kept[key] = shared(kept[key])
        for key in ("containers", "initContainers"):
            if key in spec:
                kept[key] = shared(_containers(spec[key]))
        out["spec"] = kept
    status = obj.get("status")
    if isinstance(status, dict):
        out["status"] = {k: status[k] for k in _POD_STATUS if k in status}
    return CompactPod.from_trimmed(out, shared)


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
