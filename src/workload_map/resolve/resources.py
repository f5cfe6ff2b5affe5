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

from workload_map.resolve.quantity import parse_quantity, to_millis, to_units

CPU = "cpu"
MEMORY = "memory"
# Whole-GPU resource names summed into ``ResourceTotals.gpus``. MIG slices
# (``nvidia.com/mig-<profile>``) are *not* whole GPUs; they are reported under ``extended`` only.
GPU_RESOURCES: tuple[str, ...] = ("nvidia.com/gpu", "amd.com/gpu")
POD_LEVEL_RESOURCES: tuple[str, ...] = (CPU, MEMORY)

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
        if other.is_empty:
            return self
        if self.is_empty:
            return other
        return ResourceTotals(
            cpu_millis=self.cpu_millis + other.cpu_millis,
            memory_bytes=self.memory_bytes + other.memory_bytes,
            gpus=self.gpus + other.gpus,
            extended=_merge(self.extended, other.extended),
            claims=_merge(self.claims, other.claims),
        )

    def times(self, n: int) -> ResourceTotals:
        """These resources ``n`` times (``n`` pods of the same shape)."""
        if n == 1 or self.is_empty:
            return self
        if n == 0:
            return EMPTY_TOTALS
        return ResourceTotals(
            cpu_millis=self.cpu_millis * n,
            memory_bytes=self.memory_bytes * n,
            gpus=self.gpus * n,
            extended=MappingProxyType({k: v * n for k, v in self.extended.items()}),
            claims=MappingProxyType({k: v * n for k, v in self.claims.items()}),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "cpuMillis": self.cpu_millis,
            "memoryBytes": self.memory_bytes,
            "gpus": self.gpus,
            "extended": dict(self.extended),
            "claims": dict(self.claims),
        }


EMPTY_TOTALS = ResourceTotals()


def sum_totals(items: Iterable[ResourceTotals]) -> ResourceTotals:
    total = EMPTY_TOTALS
    for item in items:
        total = total + item
    return total


def _merge(a: Mapping[str, int], b: Mapping[str, int]) -> Mapping[str, int]:
    if not b:
        return a
    if not a:
        return b
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return MappingProxyType(out)


# --- per-pod computation (exact, nano-units) ---------------------------------------------


def _quantities(section: Any) -> dict[str, int]:
    if not isinstance(section, dict):
        return {}
    out: dict[str, int] = {}
    for name, value in section.items():
        if value is None:
            continue
        out[name] = parse_quantity(value)
    return out


def requirement_requests(requirements: Any) -> dict[str, int]:
    """Effective requests of a ``ResourceRequirements``: ``requests``, falling back per
    resource to ``limits``."""
    if not isinstance(requirements, dict):
        return {}
    limits = requirements.get("limits")
    requests = requirements.get("requests")
    if not limits:
        return _quantities(requests)
    merged = _quantities(limits)
    merged.update(_quantities(requests))
    return merged


def _container_requests(container: Any) -> dict[str, int]:
    if not isinstance(container, dict):
        return {}
    return requirement_requests(container.get("resources"))


def _add_into(acc: dict[str, int], add: Mapping[str, int]) -> None:
    for k, v in add.items():
        acc[k] = acc.get(k, 0) + v


def _max_into(acc: dict[str, int], other: Mapping[str, int]) -> None:
    for k, v in other.items():
        cur = acc.get(k)
        if cur is None or v > cur:
            acc[k] = v


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def pod_spec_requests(pod_spec: Any) -> dict[str, int]:
    """Per-pod requests (nano-units by resource name) of a PodSpec, as Kubernetes computes them."""
    if not isinstance(pod_spec, dict):
        return {}
    reqs: dict[str, int] = {}
    for c in _as_list(pod_spec.get("containers")):
        _add_into(reqs, _container_requests(c))
    init_reqs: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    for c in _as_list(pod_spec.get("initContainers")):
        creqs = _container_requests(c)
        if isinstance(c, dict) and c.get("restartPolicy") == "Always":
            _add_into(reqs, creqs)
            _add_into(sidecars, creqs)
            candidate = dict(sidecars)
        else:
            candidate = dict(sidecars)
            _add_into(candidate, creqs)
        _max_into(init_reqs, candidate)
    _max_into(reqs, init_reqs)
    pod_level = requirement_requests(pod_spec.get("resources"))
    for name in POD_LEVEL_RESOURCES:
        if name in pod_level:
            reqs[name] = pod_level[name]
    _add_into(reqs, _quantities(pod_spec.get("overhead")))
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
        if not isinstance(claim, dict):
            continue
        key = claim.get("resourceClaimTemplateName") or claim.get("resourceClaimName") or claim.get("name")
        if isinstance(key, str) and key:
            out[key] = out.get(key, 0) + 1
    return out


def container_claim_names(containers: Iterable[Any]) -> dict[str, int]:
    """Claims referenced by containers (``resources.claims[].name``) but not declared at pod level."""
    out: dict[str, int] = {}
    for c in containers:
        if not isinstance(c, dict):
            continue
        res = c.get("resources")
        if not isinstance(res, dict):
            continue
        for claim in _as_list(res.get("claims")):
            if isinstance(claim, dict):
                name = claim.get("name")
                if isinstance(name, str) and name:
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
            cpu = to_millis(nanos)
        elif name == MEMORY:
            memory = to_units(nanos)
        else:
            extended[name] = to_units(nanos)
    gpus = sum(extended.get(name, 0) for name in GPU_RESOURCES)
    return ResourceTotals(
        cpu_millis=cpu,
        memory_bytes=memory,
        gpus=gpus,
        extended=MappingProxyType(extended) if extended else _EMPTY,
        claims=MappingProxyType(dict(claims)) if claims else _EMPTY,
    )


def pod_spec_totals(pod_spec: Any) -> ResourceTotals:
    """Per-pod :class:`ResourceTotals` of a PodSpec (requests plus DRA claims)."""
    if not isinstance(pod_spec, dict):
        return EMPTY_TOTALS
    claims = claim_names(pod_spec.get("resourceClaims"))
    if not claims:
        containers = [*_as_list(pod_spec.get("containers")), *_as_list(pod_spec.get("initContainers"))]
        claims = container_claim_names(containers)
    return to_totals(pod_spec_requests(pod_spec), claims)


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
