"""Devices requested through DRA resource claims (Kubernetes Dynamic Resource Allocation).

A pod asks for devices with ``spec.resourceClaims`` (each entry names a
``resourceClaimTemplateName``, from which every pod gets a claim of its own, or a
``resourceClaimName``, one claim that every pod naming it shares; before Kubernetes 1.31 both
sat under ``source``). A claim's ``devices.requests`` (ResourceClaim ``spec``, template
``spec.spec``) say which device class and how many:

- ``resource.k8s.io/v1beta1``: ``{name, deviceClassName, allocationMode, count, adminAccess}``;
- ``v1beta2`` and ``v1``: ``{name, exactly: {deviceClassName, allocationMode, count,
  adminAccess}}`` or ``{name, firstAvailable: [{name, deviceClassName, ...}]}``.

``allocationMode: ExactCount`` (the default) asks for ``count`` devices (default 1); ``All`` for
every matching device of the node, a number known only once the claim is allocated: the
allocation's results when the claim carries them, else 1 (at least one must match).
``firstAvailable`` counts its first (preferred) subrequest. A request with ``adminAccess`` gets
monitoring access to devices others use and counts none.

Device classes counted as whole GPUs, as ``nvidia.com/gpu`` is: :data:`GPU_DEVICE_CLASSES`, the
classes of NVIDIA's DRA driver (k8s-dra-driver-gpu) that hand out a whole GPU: ``gpu.nvidia.com``
(whose v1 DeviceClass maps the extended resource ``nvidia.com/gpu``) and ``vfio.gpu.nvidia.com``
(a whole GPU passed through to a VM). ``mig.nvidia.com`` (MIG slices, like ``nvidia.com/mig-*``)
and the ComputeDomain classes are devices, not GPUs. Every class is counted per pod under
``devices`` by its name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workload_map.errors import ResolveError
from workload_map.kube.objects import controller_ref, name_of, namespace_of

#: Device classes whose devices are whole GPUs (NVIDIA's DRA driver, deployments/helm DeviceClasses).
GPU_DEVICE_CLASSES: frozenset[str] = frozenset({"gpu.nvidia.com", "vfio.gpu.nvidia.com"})
#: Kubernetes' own bounds (resource.k8s.io validation): requests per claim, subrequests per request.
MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
#: Allocation results counted per claim (a request of mode All may get many devices).
MAX_RESULTS = MAX_REQUESTS * 64
DRA_GROUP = "resource.k8s.io"
TEMPLATE_KIND = "ResourceClaimTemplate"
CLAIM_KIND = "ResourceClaim"

#: ``lookup(kind, namespace, name)``: the ResourceClaimTemplate or ResourceClaim object, or None
#: when it is unknown (not found, not readable, not given).
ClaimLookup = Callable[[str, str, str], Mapping[str, Any] | None]

__all__ = [
    "CLAIM_KIND",
    "DRA_GROUP",
    "GPU_DEVICE_CLASSES",
    "TEMPLATE_KIND",
    "ClaimContext",
    "ClaimLookup",
    "claim_devices",
    "claim_essentials",
    "claim_to_cache",
    "gpus_of",
    "objects_lookup",
    "pod_claim_refs",
]


class ClaimError(ResolveError):
    """A resource claim (or template) whose device requests cannot be read."""


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _claim_spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ResourceClaimSpec: ``spec`` of a claim, ``spec.spec`` of a template."""
    spec = _dict(obj.get("spec"))
    return _dict(spec.get("spec")) if obj.get("kind") == TEMPLATE_KIND else spec


def _allocated(obj: Mapping[str, Any], request: str) -> int | None:
    """How many devices the claim's allocation gave ``request`` (None: not allocated)."""
    alloc = _dict(_dict(obj.get("status")).get("allocation"))
    results = _dict(alloc.get("devices")).get("results")
    if not isinstance(results, list):
        return None
    return sum(
        1
        for r in results[:MAX_RESULTS]
        if isinstance(r, Mapping)
        and isinstance(r.get("request"), str)
        and (r["request"] == request or r["request"].startswith(request + "/"))
        and r.get("adminAccess") is not True
    )


def _one(obj: Mapping[str, Any], name: str, req: Mapping[str, Any]) -> tuple[str, int] | None:
    """(device class, devices) of one exact request; None when it counts no device."""
    device_class = req.get("deviceClassName")
    if not isinstance(device_class, str) or not device_class or req.get("adminAccess") is True:
        return None
    if req.get("allocationMode") == "All":
        allocated = _allocated(obj, name)
        return device_class, allocated if allocated else 1
    return device_class, _int(req.get("count"), 1)


def claim_devices(obj: Mapping[str, Any]) -> dict[str, int]:
    """Device class -> devices one claim (from ``obj``, a ResourceClaim or a template) holds.
    Raises :class:`ClaimError` for a request list Kubernetes would not accept."""
    where = f'{obj.get("kind")} "{name_of(obj)}"'
    requests = _dict(_claim_spec(obj).get("devices")).get("requests")
    if requests is None:
        return {}
    if not isinstance(requests, list):
        raise ClaimError(f"{where}: devices.requests is not a list")
    if len(requests) > MAX_REQUESTS:
        raise ClaimError(f"{where}: {len(requests)} device requests, at most {MAX_REQUESTS}")
    out: dict[str, int] = {}
    for i, request in enumerate(requests):
        if not isinstance(request, Mapping):
            raise ClaimError(f"{where}: devices.requests[{i}] is not an object")
        raw_name = request.get("name")
        name = raw_name if isinstance(raw_name, str) else ""
        if "exactly" in request:  # v1beta2, v1
            found = _one(obj, name, _dict(request.get("exactly")))
        elif "firstAvailable" in request:
            subs = request.get("firstAvailable")
            if not isinstance(subs, list) or not subs or len(subs) > MAX_SUBREQUESTS:
                raise ClaimError(
                    f"{where}: devices.requests[{i}].firstAvailable needs 1 to {MAX_SUBREQUESTS} entries"
                )
            found = _one(obj, name, _dict(subs[0]))
        else:  # v1beta1: the request itself
            found = _one(obj, name, request)
        if found is not None:
            out[found[0]] = out.get(found[0], 0) + found[1]
    return out


def claim_essentials(obj: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """What :func:`claim_devices` reads of a ``kind`` object (a list item carries no kind), and
    its identity: a cache keeps this much. The request list keeps one entry past
    :data:`MAX_REQUESTS` (still refused), the allocation as many results as are counted."""
    meta = _dict(obj.get("metadata"))
    requests = _dict(_claim_spec({**obj, "kind": kind}).get("devices")).get("requests")
    if isinstance(requests, list):
        requests = requests[: MAX_REQUESTS + 1]
    devices = {"devices": {"requests": requests}} if requests is not None else {}
    out: dict[str, Any] = {
        "apiVersion": obj.get("apiVersion"),
        "kind": kind,
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion") if k in meta},
        "spec": {"spec": devices} if kind == TEMPLATE_KIND else devices,
    }
    results = _dict(_dict(_dict(obj.get("status")).get("allocation")).get("devices")).get("results")
    if isinstance(results, list):
        out["status"] = {"allocation": {"devices": {"results": results[:MAX_RESULTS]}}}
    return out


def claim_to_cache(obj: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    """What a cache of the cluster's claims keeps of ``obj`` (:func:`claim_essentials`), or None
    for a ResourceClaim the resourceclaim controller made for one pod from a template (its
    controller is that Pod): no pod template names such a claim (the resolver counts the template),
    and there is one per pod."""
    ref = controller_ref(obj)
    if kind == CLAIM_KIND and ref is not None and ref.get("kind") == "Pod" and ref.get("apiVersion") == "v1":
        return None
    return claim_essentials(obj, kind)


def gpus_of(devices: Mapping[str, int]) -> int:
    """Whole GPUs among ``devices`` (device class -> count)."""
    return sum(n for cls, n in devices.items() if cls in GPU_DEVICE_CLASSES)


def pod_claim_refs(resource_claims: Any) -> list[tuple[str, str]]:
    """``(kind, name)`` of each entry of a pod's ``resourceClaims``: a template the pod gets a
    claim from, or a claim it shares (also the pre-1.31 ``source`` form)."""
    out: list[tuple[str, str]] = []
    for entry in resource_claims if isinstance(resource_claims, list) else ():
        if not isinstance(entry, Mapping):
            continue
        source = (
            entry
            if ("resourceClaimTemplateName" in entry or "resourceClaimName" in entry)
            else _dict(entry.get("source"))
        )
        template, claim = source.get("resourceClaimTemplateName"), source.get("resourceClaimName")
        if isinstance(template, str) and template:
            out.append((TEMPLATE_KIND, template))
        elif isinstance(claim, str) and claim:
            out.append((CLAIM_KIND, claim))
    return out


def objects_lookup(objects: Iterable[Mapping[str, Any]]) -> ClaimLookup:
    """A :data:`ClaimLookup` over given objects (the documents of ``-f`` files): templates and
    claims of any ``resource.k8s.io`` version, by kind, namespace and name."""
    index: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for obj in objects:
        api = obj.get("apiVersion")
        kind = obj.get("kind")
        if isinstance(api, str) and api.startswith(DRA_GROUP + "/") and kind in (TEMPLATE_KIND, CLAIM_KIND):
            index[(str(kind), namespace_of(obj), name_of(obj))] = obj

    def lookup(kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return index.get((kind, namespace, name)) or index.get((kind, "", name))

    return lookup


@dataclass
class ClaimContext:
    """The claims and templates a workload's pods may name: ``lookup`` (live reads, or the
    objects given with ``-f``) in the workload's ``namespace``; each one read and counted once."""

    lookup: ClaimLookup
    namespace: str
    _seen: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)

    def devices(self, kind: str, name: str) -> dict[str, int]:
        """Device class -> devices of the named template or claim (empty when unknown)."""
        key = (kind, name)
        if key not in self._seen:
            obj = self.lookup(kind, self.namespace, name)
            self._seen[key] = claim_devices(obj) if obj is not None else {}
        return self._seen[key]

    def pod_devices(self, resource_claims: Any) -> tuple[dict[str, int], dict[str, int]]:
        """Devices of one pod: (from templates, each pod its own claim; from named claims, shared
        by every pod that names them)."""
        own: dict[str, int] = {}
        shared: dict[str, int] = {}
        for kind, name in pod_claim_refs(resource_claims):
            into = own if kind == TEMPLATE_KIND else shared
            for cls, n in self.devices(kind, name).items():
                into[cls] = into.get(cls, 0) + n
        return own, shared
