"""Resource requests per pod, computed the way Kubernetes computes them.

Per pod (``PodRequests`` in Kubernetes' resource helpers):

1. each container's effective requests are its ``requests``, falling back per resource to its
   ``limits`` (Kubernetes defaults a missing request to the limit);
2. regular containers are summed;
3. init containers are walked in order. A sidecar (``restartPolicy: Always``) keeps running: it
   is added to the sum of regular containers and to the running sidecar total. A regular init
   container needs its own request plus every sidecar started before it. The effective init
   request is the maximum of those, per resource;
4. the pod request is, per resource, the maximum of (2 + sidecars) and (3);
5. pod-level ``spec.resources`` (requests, falling back to limits) replaces the container-derived
   value for the resources it names (Kubernetes honours ``cpu`` and ``memory`` there);
6. ``spec.overhead`` is added.

All arithmetic is exact (integer nano-units, see :mod:`workload_map.resolve.quantity`);
rounding up to millicores/bytes happens once per pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from workload_map.resolve._fast import build
from workload_map.resolve.quantity import (
    NANO,
    format_binary,
    format_decimal,
    format_millis,
    parse_quantity,
    saturate,
    to_millis,
    to_units,
)

CPU = "cpu"
MEMORY = "memory"
# Whole-GPU resource names summed into ``ResourceTotals.gpus``. MIG slices
# (``nvidia.com/mig-<profile>``) are *not* whole GPUs; they are reported under ``extended`` only.
GPU_RESOURCES: tuple[str, ...] = ("nvidia.com/gpu", "amd.com/gpu")
POD_LEVEL_RESOURCES: tuple[str, ...] = (CPU, MEMORY)
#: Resources Kubernetes (and Karmada's ``ResourceList``) print in binary units, besides memory.
BINARY_RESOURCES: tuple[str, ...] = ("ephemeral-storage",)
HUGEPAGES_PREFIX = "hugepages-"

_EMPTY: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True)
class ResourceTotals:
    """Requested resources: per pod, per instance, per component or for a whole workload.

    ``cpu_millis`` is millicores, ``memory_bytes`` bytes (both rounded up per pod).
    ``extended`` maps every other resource name (``nvidia.com/gpu``, ``amd.com/gpu``,
    ``nvidia.com/mig-1g.5gb``, ``ephemeral-storage``, ``hugepages-2Mi``...) to an integer
    (rounded up). ``gpus`` is ``nvidia.com/gpu + amd.com/gpu``. ``claims`` counts DRA resource
    claims by the template name (``resourceClaimTemplateName``), else the claim name
    (``resourceClaimName``), else the pod's claim entry name: one per pod that references it.
    """

    cpu_millis: int = 0
    memory_bytes: int = 0
    gpus: int = 0
    extended: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    claims: Mapping[str, int] = field(default_factory=lambda: _EMPTY)

    @property
    def is_empty(self) -> bool:
        return not (self.cpu_millis or self.memory_bytes or self.gpus or self.extended or self.claims)

    def __add__(self, other: ResourceTotals) -> ResourceTotals:
        if not isinstance(other, ResourceTotals):
            return NotImplemented
        return sum_totals((self, other))

    def times(self, n: int) -> ResourceTotals:
        """These resources ``n`` times (``n`` pods of the same shape)."""
        if n == 1 or self is EMPTY_TOTALS:
            return self
        if n == 0:
            return EMPTY_TOTALS
        return build(
            ResourceTotals,
            {
                "cpu_millis": self.cpu_millis * n,
                "memory_bytes": self.memory_bytes * n,
                "gpus": self.gpus * n,
                "extended": MappingProxyType({k: v * n for k, v in self.extended.items()})
                if self.extended
                else _EMPTY,
                "claims": MappingProxyType({k: v * n for k, v in self.claims.items()})
                if self.claims
                else _EMPTY,
            },
        )

    def to_resource_list(self) -> dict[str, str]:
        """A Kubernetes ``ResourceList`` (resource name -> quantity text) of the positive amounts,
        in Karmada's formats (``Resource.ResourceList``): ``cpu`` in milli-units, ``memory``,
        ``ephemeral-storage`` and ``hugepages-*`` binary, every other resource decimal; ``cpu``,
        ``memory``, then the others by name. DRA claims are not resources and are left out."""
        out: dict[str, str] = {}
        if self.cpu_millis > 0:
            out[CPU] = format_millis(saturate(self.cpu_millis))
        if self.memory_bytes > 0:
            out[MEMORY] = format_binary(saturate(self.memory_bytes))
        for name in sorted(self.extended):
            value = self.extended[name]
            if value > 0 and name not in out:
                binary = name in BINARY_RESOURCES or name.startswith(HUGEPAGES_PREFIX)
                out[name] = format_binary(saturate(value)) if binary else format_decimal(saturate(value))
        return out

    def to_dict(self) -> dict[str, Any]:
        """Machine form; numbers saturate at int64 (JSON consumers hold 64-bit integers)."""
        return {
            "cpuMillis": saturate(self.cpu_millis),
            "memoryBytes": saturate(self.memory_bytes),
            "gpus": saturate(self.gpus),
            "extended": {k: saturate(v) for k, v in self.extended.items()},
            "claims": {k: saturate(v) for k, v in self.claims.items()},
        }


EMPTY_TOTALS = ResourceTotals()


def sum_totals(items: Iterable[ResourceTotals]) -> ResourceTotals:
    """The sum of ``items`` (one pass; the single non-empty item is returned as is)."""
    cpu = memory = gpus = 0
    extended: dict[str, int] | None = None
    claims: dict[str, int] | None = None
    last = EMPTY_TOTALS
    count = 0
    for item in items:
        if item is EMPTY_TOTALS:
            continue
        count += 1
        last = item
        cpu += item.cpu_millis
        memory += item.memory_bytes
        gpus += item.gpus
        if item.extended:
            if extended is None:
                extended = dict(item.extended)
            else:
                for k, v in item.extended.items():
                    extended[k] = extended.get(k, 0) + v
        if item.claims:
            if claims is None:
                claims = dict(item.claims)
            else:
                for k, v in item.claims.items():
                    claims[k] = claims.get(k, 0) + v
    if count <= 1:
        return last
    return build(
        ResourceTotals,
        {
            "cpu_millis": cpu,
            "memory_bytes": memory,
            "gpus": gpus,
            "extended": MappingProxyType(extended) if extended else _EMPTY,
            "claims": MappingProxyType(claims) if claims else _EMPTY,
        },
    )


def max_totals(items: Iterable[ResourceTotals]) -> ResourceTotals:
    """Per resource, the largest of ``items`` (what one replica must fit when any of several
    pod shapes may land on it); DRA claims too."""
    cpu = memory = gpus = 0
    extended: dict[str, int] = {}
    claims: dict[str, int] = {}
    for item in items:
        cpu = max(cpu, item.cpu_millis)
        memory = max(memory, item.memory_bytes)
        gpus = max(gpus, item.gpus)
        _max_into(extended, item.extended)
        _max_into(claims, item.claims)
    if not (cpu or memory or gpus or extended or claims):
        return EMPTY_TOTALS
    return build(
        ResourceTotals,
        {
            "cpu_millis": cpu,
            "memory_bytes": memory,
            "gpus": gpus,
            "extended": MappingProxyType(extended) if extended else _EMPTY,
            "claims": MappingProxyType(claims) if claims else _EMPTY,
        },
    )


# --- per-pod computation (exact, nano-units) ---------------------------------------------
#
# This is the resolver's hot path: written as plain loops over the JSON data, with parsed
# quantity strings memoised (a cluster uses few distinct quantity spellings).

_QCACHE: dict[str, int] = {}
_QCACHE_MAX = 8192


def _q(value: Any) -> int:
    if value.__class__ is str:
        hit = _QCACHE.get(value)
        if hit is not None:
            return hit
        parsed = parse_quantity(value)
        if len(_QCACHE) < _QCACHE_MAX:
            _QCACHE[value] = parsed
        return parsed
    return parse_quantity(value)


def _quantities(section: Any) -> dict[str, int]:
    if section.__class__ is not dict:
        return {}
    return {name: _q(value) for name, value in section.items() if value is not None}


def requirement_requests(requirements: Any) -> dict[str, int]:
    """Effective requests of a ``ResourceRequirements``: ``requests``, falling back per
    resource to ``limits``."""
    if requirements.__class__ is not dict:
        return {}
    limits = requirements.get("limits")
    requests = requirements.get("requests")
    out: dict[str, int] = {}
    if limits.__class__ is dict:
        for name, value in limits.items():
            if value is not None:
                out[name] = _q(value)
    if requests.__class__ is dict:
        for name, value in requests.items():
            if value is not None:
                out[name] = _q(value)
    return out


def _container_requests(container: Any, claims: dict[str, int] | None = None) -> dict[str, int]:
    """A container's effective requests: ``requests``, falling back per resource to ``limits``.
    Names in ``resources.claims`` are recorded in ``claims`` when given."""
    if container.__class__ is not dict:
        return {}
    res = container.get("resources")
    if not res or res.__class__ is not dict:
        return {}
    out: dict[str, int] = {}
    if claims is not None and "claims" in res:
        for claim in _as_list(res["claims"]):
            if claim.__class__ is dict:
                name = claim.get("name")
                if name.__class__ is str and name:
                    claims[name] = 1
    cache_get = _QCACHE.get
    limits = res.get("limits")
    if limits and limits.__class__ is dict:
        for name, value in limits.items():
            if value is not None:
                q = cache_get(value) if value.__class__ is str else None
                out[name] = _q(value) if q is None else q
    requests = res.get("requests")
    if requests and requests.__class__ is dict:
        for name, value in requests.items():
            if value is not None:
                q = cache_get(value) if value.__class__ is str else None
                out[name] = _q(value) if q is None else q
    return out


def _add_into(acc: dict[str, int], add: Mapping[str, int]) -> None:
    for k, v in add.items():
        acc[k] = acc.get(k, 0) + v


def _max_into(acc: dict[str, int], other: Mapping[str, int]) -> None:
    for k, v in other.items():
        cur = acc.get(k)
        if cur is None or v > cur:
            acc[k] = v


def _as_list(value: Any) -> list[Any]:
    return value if value.__class__ is list else []


def pod_spec_requests(pod_spec: Any, claims: dict[str, int] | None = None) -> dict[str, int]:
    """Per-pod requests (nano-units by resource name) of a PodSpec, as Kubernetes computes them.
    Container-level claim names are recorded in ``claims`` when given."""
    if pod_spec.__class__ is not dict:
        return {}
    reqs: dict[str, int] = {}
    containers = pod_spec.get("containers")
    if containers.__class__ is list:
        for c in containers:
            creqs = _container_requests(c, claims)
            if creqs:
                if reqs:
                    for k, v in creqs.items():
                        reqs[k] = reqs.get(k, 0) + v
                else:
                    reqs = creqs
    inits = pod_spec.get("initContainers")
    if inits and inits.__class__ is list:
        init_reqs: dict[str, int] = {}
        sidecars: dict[str, int] = {}
        for c in inits:
            creqs = _container_requests(c, claims)
            if c.__class__ is dict and c.get("restartPolicy") == "Always":
                _add_into(reqs, creqs)
                _add_into(sidecars, creqs)
                _max_into(init_reqs, sidecars)
            elif sidecars:
                candidate = dict(sidecars)
                _add_into(candidate, creqs)
                _max_into(init_reqs, candidate)
            else:
                _max_into(init_reqs, creqs)
        _max_into(reqs, init_reqs)
    pod_resources = pod_spec.get("resources")
    if pod_resources:
        pod_level = requirement_requests(pod_resources)
        for name in POD_LEVEL_RESOURCES:
            if name in pod_level:
                reqs[name] = pod_level[name]
    overhead = pod_spec.get("overhead")
    if overhead:
        _add_into(reqs, _quantities(overhead))
    return reqs


def fragmented_requests(containers: Any, container: Any, resources: Any) -> dict[str, int]:
    """Per-replica requests of a fragmented spec: the sum of ``containers`` and ``container``;
    when that is empty, the CR-level ``resources``."""
    reqs: dict[str, int] = {}
    for c in _as_list(containers):
        _add_into(reqs, _container_requests(c))
    _add_into(reqs, _container_requests(container))
    if not reqs:
        reqs = requirement_requests(resources)
    return reqs


def claim_names(pod_resource_claims: Any) -> dict[str, int]:
    """DRA claims of one pod, keyed by template name, else claim name, else entry name."""
    out: dict[str, int] = {}
    for claim in _as_list(pod_resource_claims):
        if claim.__class__ is not dict:
            continue
        key = claim.get("resourceClaimTemplateName") or claim.get("resourceClaimName") or claim.get("name")
        if key.__class__ is str and key:
            out[key] = out.get(key, 0) + 1
    return out


def container_claim_names(containers: Iterable[Any]) -> dict[str, int]:
    """Claims referenced by containers (``resources.claims[].name``) but not declared at pod level."""
    out: dict[str, int] = {}
    for c in containers:
        if c.__class__ is not dict:
            continue
        res = c.get("resources")
        if res.__class__ is not dict:
            continue
        claims = res.get("claims")
        if not claims:
            continue
        for claim in _as_list(claims):
            if claim.__class__ is dict:
                name = claim.get("name")
                if name.__class__ is str and name:
                    out[name] = 1
    return out


def to_totals(reqs: Mapping[str, int], claims: Mapping[str, int] | None = None) -> ResourceTotals:
    """Round exact per-pod requests into a :class:`ResourceTotals`."""
    if not reqs and not claims:
        return EMPTY_TOTALS
    cpu = 0
    memory = 0
    extended: dict[str, int] = {}
    for name, nanos in reqs.items():
        if name == CPU:
            cpu = -(-nanos // 1_000_000) if nanos >= 0 else to_millis(nanos)
        elif name == MEMORY:
            memory = -(-nanos // NANO) if nanos >= 0 else to_units(nanos)
        else:
            extended[name] = -(-nanos // NANO) if nanos >= 0 else to_units(nanos)
    gpus = extended.get("nvidia.com/gpu", 0) + extended.get("amd.com/gpu", 0) if extended else 0
    return build(
        ResourceTotals,
        {
            "cpu_millis": cpu,
            "memory_bytes": memory,
            "gpus": gpus,
            "extended": MappingProxyType(extended) if extended else _EMPTY,
            "claims": MappingProxyType(dict(claims)) if claims else _EMPTY,
        },
    )


def pod_spec_totals(pod_spec: Any) -> ResourceTotals:
    """Per-pod :class:`ResourceTotals` of a PodSpec (requests plus DRA claims)."""
    if pod_spec.__class__ is not dict:
        return EMPTY_TOTALS
    container_claims: dict[str, int] = {}
    reqs = pod_spec_requests(pod_spec, container_claims)
    pod_claims = pod_spec.get("resourceClaims")
    claims = claim_names(pod_claims) if pod_claims else None
    return to_totals(reqs, claims or container_claims)


def fragmented_totals(
    containers: Any, container: Any, resources: Any, resource_claims: Any
) -> ResourceTotals:
    """Per-replica :class:`ResourceTotals` of a fragmented spec."""
    claims = claim_names(resource_claims)
    if not claims:
        claims = container_claim_names([*_as_list(containers), container])
        if not claims and isinstance(resources, dict):
            claims = container_claim_names([{"resources": resources}])
    return to_totals(fragmented_requests(containers, container, resources), claims)
