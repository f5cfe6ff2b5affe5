"""``ReviseReplica``: set a workload's pods to Karmada's count for one member cluster, through the
definition's scale paths (:func:`workload_map.resolve.writeback.set_replica_fields`: the fields
themselves, as the exported Lua writes them).

Karmada calls it for every member cluster with that cluster's share of ``InterpretReplica``'s
replicas (the whole count when the policy duplicates). Rules:

* the count already equals the object's pods: no patch (whatever the definition can scale);
* instances of components that cannot be scaled (no ``replicasPath``, a constant, a path the
  write-back refuses) keep their pods; they are the *fixed* pods;
* the others share ``count - fixed`` in proportion to their current pods, by largest remainder
  (each gets the floor of its share, the leftover pods go to the largest remainders, earlier
  instances first on ties), or equally (earlier instances first) when they all have none;
* the object written is resolved again and must hold exactly ``count`` pods (a scale path that
  reads back differently, e.g. clamped by ``maxReplicas``, refuses the revision).

Refused, with the reason: a count below the fixed pods, or no component that can be scaled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.errors import InterpretError, WorkloadMapError
from workload_map.resolve.compiled import CompiledDefinition
from workload_map.resolve.placement import InstanceNeeds, instance_needs
from workload_map.resolve.resolver import resolve
from workload_map.resolve.writeback import set_replica_fields

from .requirements import declared


def share(total: int, weights: Sequence[int]) -> list[int]:
    """``total`` split over ``weights``: proportional by largest remainder, or evenly when every
    weight is 0 (earlier entries first). Sums to ``total`` exactly."""
    n = len(weights)
    if n == 0:
        return []
    whole = sum(weights)
    if whole == 0:
        base, extra = divmod(total, n)
        return [base + (1 if i < extra else 0) for i in range(n)]
    parts = [total * w // whole for w in weights]
    remainders = [total * w % whole for w in weights]
    leftover = total - sum(parts)
    order = sorted(range(n), key=lambda i: (-remainders[i], i))
    for i in order[:leftover]:
        parts[i] += 1
    return parts


def _scalable(
    cd: CompiledDefinition, obj: Mapping[str, Any], component: str, counts: dict[str, int]
) -> str | None:
    """None when the write-back can set this component's counts, else why not."""
    try:
        set_replica_fields(cd, obj, component, counts)
    except WorkloadMapError as exc:
        return str(exc)
    return None


def revise(
    cd: CompiledDefinition, obj: Mapping[str, Any], needs: Sequence[InstanceNeeds], count: int
) -> dict[str, Any] | None:
    """The revised object, or None when ``count`` is already the object's pod count."""
    pods = declared(needs)
    current = sum(n.desired_replicas for n in pods)
    if count == current:
        return None
    by_component: dict[str, list[InstanceNeeds]] = {}
    for n in needs:
        by_component.setdefault(n.component, []).append(n)
    scalable: list[InstanceNeeds] = []
    refused: list[str] = []
    for component, instances in by_component.items():
        counts = {n.instance_id: n.desired_replicas for n in instances}
        why = _scalable(cd, obj, component, counts)
        if why is None:
            scalable += [n for n in instances if n.declared]
        elif any(n.declared for n in instances):
            refused.append(f"{component} ({why})")
    if not scalable:
        raise InterpretError(
            f"cannot revise replicas to {count} (the object has {current}): no component can be scaled: "
            + "; ".join(refused)
        )
    fixed = current - sum(n.desired_replicas for n in scalable)
    if count < fixed:
        raise InterpretError(
            f"cannot revise replicas to {count}: {fixed} pods belong to components that cannot be scaled: "
            + "; ".join(refused)
        )
    targets = share(count - fixed, [n.desired_replicas for n in scalable])
    wanted: dict[str, dict[str, int]] = {}
    for n in needs:
        wanted.setdefault(n.component, {})[n.instance_id] = n.desired_replicas
    for n, target in zip(scalable, targets, strict=True):
        wanted[n.component][n.instance_id] = target
    new: dict[str, Any] = dict(obj)
    for component in dict.fromkeys(n.component for n in scalable):
        new = set_replica_fields(cd, new, component, wanted[component]).new_object
    got = sum(n.desired_replicas for n in declared(instance_needs(resolve(cd, new))))
    if got != count:
        raise InterpretError(
            f"cannot revise replicas to {count}: after writing the scale paths the object has {got} pods "
            "(a path reads back differently from what was written, e.g. clamped by maxReplicas)"
        )
    return new
