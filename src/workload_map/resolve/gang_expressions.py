"""The ``gangScheduling.expressions`` extension: PodGroup fields computed by jq.

KAI Scheduler's native groupers read rules the Karta gang formats cannot state: an annotation
that overrides the size (``kai.scheduler/batch-min-member``), a size that depends on a policy
(PyTorch ``elasticPolicy.minReplicas``, LWS ``startupPolicy``), nested subgroups (a JobSet
replicated job with one leaf per replica). The extension lets a definition say them in jq: each
expression runs on the top owner (``.``) with the pod as ``$pod`` and yields one value, ``null``
for "keep what the gang format computed".

This module evaluates them and checks every result before it is used: integers in int32 range,
names that are DNS-1123 labels (subgroups) or subdomains (the PodGroup), a subgroup list of at
most :data:`MAX_SUB_GROUPS` entries with known keys, unique names and parents that exist, and a
pod subgroup that is one of them. Any other value is a :class:`GangResultError` naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from workload_map.errors import ResolveError, WorkloadMapError
from workload_map.resolve._support import jq_tostring, jq_type
from workload_map.resolve.compiled import CompiledExpression, CompiledGangExpressions
from workload_map.resolve.quantity import QuantityError, parse_quantity

#: KAI's own ceiling on generated subgroups (``maxAllowedSegmentation`` in its groupers).
MAX_SUB_GROUPS = 10_000
_INT32_MAX = 2**31 - 1
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_SUB_GROUP_KEYS = frozenset({"name", "minMember", "minSubGroup", "parent", "topologyConstraint"})
_TOPOLOGY_KEYS = ("topology", "requiredTopologyLevel", "preferredTopologyLevel")


class GangResultError(ResolveError):
    """A gang expression failed or yielded a value its field cannot take."""


@dataclass(frozen=True)
class SubGroupSpec:
    """One subgroup as an expression gave it (the PodGroup CRD's subgroup shape)."""

    name: str
    min_member: int | None
    min_sub_group: int | None
    parent: str | None
    topology: Mapping[str, str] | None


@dataclass(frozen=True)
class GangOverrides:
    """What the expressions set (``None``: not set, keep the computed value)."""

    name: str | None = None
    min_member: int | None = None
    min_sub_group: int | None = None
    sub_groups: tuple[SubGroupSpec, ...] | None = None
    pod_sub_group: str | None = None


def _run(ce: CompiledExpression | None, top_owner: Mapping[str, Any], pod: Mapping[str, Any]) -> Any:
    if ce is None:
        return None
    try:
        results = ce.expr.all(top_owner, {"pod": pod})
    except WorkloadMapError as exc:
        raise GangResultError(f"{ce.location}: failed to evaluate: {exc}") from exc
    if len(results) > 1:
        raise GangResultError(f"{ce.location}: yielded {len(results)} values, expected one")
    return results[0] if results else None


def _int(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise GangResultError(f"{where}: is {jq_type(value)} ({jq_tostring(value)}), expected an integer")
    if not 0 <= value <= _INT32_MAX:
        raise GangResultError(f"{where}: {value} is out of range 0..{_INT32_MAX}")
    return value


def _label(value: Any, where: str) -> str:
    if not isinstance(value, str) or len(value) > 63 or not _DNS1123_LABEL.match(value):
        raise GangResultError(f"{where}: {jq_tostring(value)} is not a DNS-1123 label")
    return value


def _topology(value: Any, where: str) -> Mapping[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise GangResultError(f"{where}: is {jq_type(value)}, expected an object")
    unknown = sorted(set(value) - set(_TOPOLOGY_KEYS))
    if unknown:
        raise GangResultError(f"{where}: unknown keys {', '.join(unknown)}")
    out: dict[str, str] = {}
    for key in _TOPOLOGY_KEYS:
        v = value.get(key)
        if v is None or v == "":
            continue
        if not isinstance(v, str):
            raise GangResultError(f"{where}.{key}: is {jq_type(v)}, expected a string")
        out[key] = v
    return out or None


def _sub_groups(value: Any, where: str) -> tuple[SubGroupSpec, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise GangResultError(f"{where}: is {jq_type(value)}, expected an array")
    if len(value) > MAX_SUB_GROUPS:
        raise GangResultError(f"{where}: {len(value)} subgroups, at most {MAX_SUB_GROUPS}")
    out: list[SubGroupSpec] = []
    names: set[str] = set()
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(item, Mapping):
            raise GangResultError(f"{at}: is {jq_type(item)}, expected an object")
        unknown = sorted(set(item) - _SUB_GROUP_KEYS)
        if unknown:
            raise GangResultError(f"{at}: unknown keys {', '.join(unknown)}")
        name = _label(item.get("name"), f"{at}.name")
        if name in names:
            raise GangResultError(f"{at}.name: duplicate subgroup {name!r}")
        names.add(name)
        min_member = _int(item.get("minMember"), f"{at}.minMember")
        min_sub_group = _int(item.get("minSubGroup"), f"{at}.minSubGroup")
        if min_member is not None and min_sub_group is not None:
            raise GangResultError(f"{at}: minMember and minSubGroup are mutually exclusive")
        parent = item.get("parent")
        if parent is not None:
            parent = _label(parent, f"{at}.parent")
        out.append(
            SubGroupSpec(
                name, min_member, min_sub_group, parent, _topology(item.get("topologyConstraint"), at)
            )
        )
    by_name = {s.name: s for s in out}
    rooted: set[str] = set()  # names whose parent chain is known to end; each name walked once
    for i, sg in enumerate(out):
        if sg.parent is not None and sg.parent not in names:
            raise GangResultError(f"{where}[{i}].parent: no subgroup named {sg.parent!r}")
        path: set[str] = set()
        current: str | None = sg.name
        while current is not None and current not in rooted:
            if current in path:
                raise GangResultError(f"{where}[{i}].parent: the parent chain of {sg.name!r} has a cycle")
            path.add(current)
            current = by_name[current].parent
        rooted.update(path)
    return tuple(out)


def evaluate_gang_expressions(
    compiled: CompiledGangExpressions, top_owner: Mapping[str, Any], pod: Mapping[str, Any]
) -> GangOverrides:
    """Run every gang expression on ``top_owner`` with ``$pod`` and check the results."""
    name = _run(compiled.name, top_owner, pod)
    if name is not None and not isinstance(name, str):
        raise GangResultError(
            f"{compiled.name.location if compiled.name else 'name'}: is {jq_type(name)}, expected a string"
        )
    subs = _sub_groups(_run(compiled.sub_groups, top_owner, pod), _where(compiled.sub_groups))
    pod_sub = _run(compiled.pod_sub_group, top_owner, pod)
    if pod_sub is not None and not isinstance(pod_sub, str):
        raise GangResultError(f"{_where(compiled.pod_sub_group)}: is {jq_type(pod_sub)}, expected a string")
    return GangOverrides(
        name=name,
        min_member=_int(_run(compiled.min_member, top_owner, pod), _where(compiled.min_member)),
        min_sub_group=_int(_run(compiled.min_sub_group, top_owner, pod), _where(compiled.min_sub_group)),
        sub_groups=subs,
        pod_sub_group=pod_sub,
    )


@dataclass(frozen=True)
class GangSizes:
    """The sizing expressions a whole-workload plan reads (run with an empty ``$pod``)."""

    min_member: int | None = None
    min_sub_group: int | None = None


#: An empty pod, for expressions evaluated for the whole workload (``$pod.metadata.labels.x``
#: yields ``null`` on it).
NO_POD: Mapping[str, Any] = {"metadata": {}}


def evaluate_gang_sizes(compiled: CompiledGangExpressions, top_owner: Mapping[str, Any]) -> GangSizes:
    """``minMember`` and ``minSubGroup`` for the whole workload: no pod, so ``$pod`` is empty."""
    return GangSizes(
        min_member=_int(_run(compiled.min_member, top_owner, NO_POD), _where(compiled.min_member)),
        min_sub_group=_int(_run(compiled.min_sub_group, top_owner, NO_POD), _where(compiled.min_sub_group)),
    )


@dataclass(frozen=True)
class GangPolicy:
    """Queue, PriorityClass, schedule timeout and minimum resources of a gang (``None``: not set).
    ``min_resources`` maps resource names to quantity texts, checked as quantities."""

    queue: str | None = None
    priority_class_name: str | None = None
    schedule_timeout_seconds: int | None = None
    min_resources: Mapping[str, str] | None = None

    def overridden(self, **values: Any) -> GangPolicy:
        """This policy with every given value that is not ``None`` replacing its own."""
        return replace(self, **{k: v for k, v in values.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "priorityClassName": self.priority_class_name,
            "scheduleTimeoutSeconds": self.schedule_timeout_seconds,
            "minResources": None if self.min_resources is None else dict(self.min_resources),
        }


_MAX_RESOURCE_NAMES = 64
_RESOURCE_NAME = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def check_name(value: Any, where: str) -> str | None:
    """``value`` as a queue or PriorityClass name (a DNS-1123 subdomain; ``None`` or empty:
    unset); anything else is a :class:`GangResultError` naming ``where``."""
    return _name_value(value, where)


def _name_value(value: Any, where: str) -> str | None:
    """A DNS-1123 subdomain (queue and PriorityClass names), or ``None``."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 253 or not _DNS1123_SUBDOMAIN.match(value):
        raise GangResultError(f"{where}: {jq_tostring(value)} is not a DNS-1123 subdomain")
    return value


def _quantities(value: Any, where: str) -> Mapping[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise GangResultError(f"{where}: is {jq_type(value)}, expected an object of resource quantities")
    if len(value) > _MAX_RESOURCE_NAMES:
        raise GangResultError(f"{where}: {len(value)} resources, at most {_MAX_RESOURCE_NAMES}")
    out: dict[str, str] = {}
    for name, q in value.items():
        if not isinstance(name, str) or len(name) > 253 or not _RESOURCE_NAME.match(name):
            raise GangResultError(f"{where}: {jq_tostring(name)} is not a resource name")
        text = q if isinstance(q, str) else jq_tostring(q)
        try:
            if isinstance(q, bool) or parse_quantity(q) < 0:
                raise QuantityError("negative")
        except QuantityError:
            raise GangResultError(f"{where}.{name}: {jq_tostring(q)} is not a quantity >= 0") from None
        out[name] = text
    return out


def evaluate_gang_policy(compiled: CompiledGangExpressions, top_owner: Mapping[str, Any]) -> GangPolicy:
    """The policy expressions on the workload (no pod), each result checked."""
    return GangPolicy(
        queue=_name_value(_run(compiled.queue, top_owner, NO_POD), _where(compiled.queue)),
        priority_class_name=_name_value(
            _run(compiled.priority_class_name, top_owner, NO_POD), _where(compiled.priority_class_name)
        ),
        schedule_timeout_seconds=_int(
            _run(compiled.schedule_timeout_seconds, top_owner, NO_POD),
            _where(compiled.schedule_timeout_seconds),
        ),
        min_resources=_quantities(
            _run(compiled.min_resources, top_owner, NO_POD), _where(compiled.min_resources)
        ),
    )


def _where(ce: CompiledExpression | None) -> str:
    return ce.location if ce is not None else "gangScheduling.expressions"


__all__ = [
    "MAX_SUB_GROUPS",
    "NO_POD",
    "GangOverrides",
    "GangPolicy",
    "GangResultError",
    "GangSizes",
    "SubGroupSpec",
    "check_name",
    "evaluate_gang_expressions",
    "evaluate_gang_policy",
    "evaluate_gang_sizes",
]
